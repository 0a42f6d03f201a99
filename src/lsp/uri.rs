//! `file:` URIs ↔ filesystem paths.
//!
//! `lsp-types` 0.97 represents URIs as `fluent_uri::Uri`, which has no file-path helpers,
//! so this module does the conversion (RFC 8089 `file` URIs, as editors send them):
//! `file:///home/me/My%20Job.kt` ↔ `/home/me/My Job.kt`. The path is percent-decoded
//! byte-wise (on Unix a path need not be UTF-8); an authority other than empty or
//! `localhost` is a remote host, which this server cannot read, so it yields `None` (on
//! Windows it becomes a UNC path). On Windows `file:///C:/x` and `file:///c%3A/x` both
//! become `C:/x`.

use std::path::{Path, PathBuf};

/// The path a `file:` URI names, or `None` for another scheme, a remote host, a query or
/// fragment, or a malformed percent escape.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let rest = strip_prefix_ignore_case(uri, "file:")?;
    if rest.contains(['?', '#']) {
        return None;
    }
    // `file:/path` (no authority) is allowed by RFC 8089 as well as `file:///path`.
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, "/"),
        },
        None => ("", rest),
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes = percent_decode(path)?;
    from_decoded(authority, bytes)
}

#[cfg(not(windows))]
fn from_decoded(authority: &str, bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(windows)]
fn from_decoded(authority: &str, bytes: Vec<u8>) -> Option<PathBuf> {
    let path = String::from_utf8(bytes).ok()?;
    if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
        return Some(PathBuf::from(format!(
            r"\\{authority}{}",
            path.replace('/', r"\")
        )));
    }
    // `/C:/dir` → `C:/dir`.
    let b = path.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        return Some(PathBuf::from(&path[1..]));
    }
    Some(PathBuf::from(path))
}

/// The `file:` URI of an absolute `path`: every byte other than an unreserved character
/// (RFC 3986: letters, digits, `-._~`) or `/` is percent-encoded, so the result always
/// parses as a URI. A relative path is made absolute against the current directory
/// first; `None` when that fails.
pub fn from_path(path: &Path) -> Option<String> {
    let absolute;
    let path = if path.is_absolute() {
        path
    } else {
        absolute = std::env::current_dir().ok()?.join(path);
        &absolute
    };
    let mut out = String::from("file://");
    for &b in path_bytes(path)?.iter() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Some(out)
}

#[cfg(not(windows))]
fn path_bytes(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Some(path.as_os_str().as_bytes().to_vec())
}

#[cfg(windows)]
fn path_bytes(path: &Path) -> Option<Vec<u8>> {
    let s = path.to_str()?.replace('\\', "/");
    // `C:/dir` → `/C:/dir`; a UNC `//host/share` keeps its authority.
    Some(if s.starts_with("//") {
        s.into_bytes()
    } else {
        format!("/{s}").into_bytes()
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Decodes `%XX` escapes; `None` when an escape is not two hex digits.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = hex(*b.get(i + 1)?)?;
            let lo = hex(*b.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn decodes_percent_escapes_and_localhost() {
        assert_eq!(
            to_path("file:///home/me/My%20Job%C3%BC.kt"),
            Some(PathBuf::from("/home/me/My Jobü.kt"))
        );
        assert_eq!(
            to_path("file://localhost/tmp/a.rs"),
            Some(PathBuf::from("/tmp/a.rs"))
        );
        assert_eq!(to_path("FILE:/tmp/a.rs"), Some(PathBuf::from("/tmp/a.rs")));
        // Unencoded non-ASCII (some clients send it) passes through.
        assert_eq!(
            to_path("file:///tmp/ü.kt"),
            Some(PathBuf::from("/tmp/ü.kt"))
        );
    }

    #[test]
    fn rejects_what_is_not_a_local_file() {
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(to_path("https://example.com/a.kt"), None);
        assert_eq!(to_path("file://server/share/a.kt"), None);
        assert_eq!(to_path("file:///tmp/a%2"), None);
        assert_eq!(to_path("file:///tmp/a%zz.kt"), None);
        assert_eq!(to_path("file:///tmp/a.kt?x=1"), None);
        assert_eq!(to_path("file:relative/a.kt"), None);
    }

    #[test]
    fn encodes_and_round_trips() {
        let p = Path::new("/tmp/dir with space/Jöb#1%.kt");
        let uri = from_path(p).unwrap();
        assert_eq!(uri, "file:///tmp/dir%20with%20space/J%C3%B6b%231%25.kt");
        assert!(uri.parse::<lsp_types::Uri>().is_ok());
        assert_eq!(to_path(&uri).as_deref(), Some(p));
    }

    #[test]
    fn non_utf8_paths_round_trip() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff.rs"));
        let uri = from_path(p).unwrap();
        assert_eq!(uri, "file:///tmp/%FF.rs");
        assert_eq!(to_path(&uri).as_deref(), Some(p));
    }
}
