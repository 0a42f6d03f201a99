//! File-system access that a hostile tree cannot turn against the user: bounded reads of
//! regular files only (no FIFO, device, `/proc` file or, when asked, symbolic link), and
//! writes through a temporary file in the target directory renamed over the target (which
//! replaces a symbolic link instead of writing through it), never creating directories
//! through symbolic links. Nothing here runs a process.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Largest configuration file read (`idemlint.toml`, `.idemlint.toml`, `Cargo.toml`).
pub const MAX_CONFIG_BYTES: u64 = 8 << 20;
/// Largest `.gitignore` / `.ignore` file read.
pub const MAX_IGNORE_BYTES: u64 = 1 << 20;
/// Largest baseline file read.
pub const MAX_BASELINE_BYTES: u64 = 256 << 20;
/// Default largest source file analysed, bytes (10 MiB): `max-file-size` in the
/// configuration or `--max-file-size` change it. Parsing and lowering take roughly 100
/// bytes of memory per source byte, so this bounds one file's memory to about 1 GiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;

/// Parses a size: a number of bytes (`1048576`) or a number with a unit, `KB`/`MB`/`GB`
/// (powers of 1,000) or `KiB`/`MiB`/`GiB` (powers of 1,024), case-insensitive, with or
/// without a space: `10MB`, `10 MiB`, `512kib`. Fractions are allowed with a unit (`1.5MB`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let mult: u64 = match unit.as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1_000,
        "mb" | "m" => 1_000_000,
        "gb" | "g" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "`{}` is not a size: write a number of bytes or a number with KB, MB, GB, KiB, MiB or GiB (`10MB`)",
                crate::text::escape_controls(&s.chars().take(40).collect::<String>())
            ));
        }
    };
    let bad = || {
        format!(
            "`{}` is not a size: write a number of bytes or a number with KB, MB, GB, KiB, MiB or GiB (`10MB`)",
            crate::text::escape_controls(&s.chars().take(40).collect::<String>())
        )
    };
    if num.is_empty() {
        return Err(bad());
    }
    let v = if num.contains('.') {
        let f: f64 = num.parse().map_err(|_| bad())?;
        let b = f * mult as f64;
        if !b.is_finite() || b >= u64::MAX as f64 {
            return Err(bad());
        }
        b as u64
    } else {
        num.parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(mult))
            .ok_or_else(bad)?
    };
    Ok(v)
}

/// A byte count for people: `10 MiB`, `1.5 MiB`, `900 KiB`, `12 bytes`.
pub fn human_size(n: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, name) in units {
        if n >= size {
            let v = n as f64 / size as f64;
            return if n.is_multiple_of(size) {
                format!("{} {name}", n / size)
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{n} bytes")
}

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// A symbolic link where links are not followed.
    Symlink,
    /// A directory, FIFO, socket or device.
    NotRegular,
    /// Larger than the limit (in bytes).
    TooLarge(u64),
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Symlink => f.write_str("it is a symbolic link (not followed)"),
            ReadError::NotRegular => {
                f.write_str("not a regular file (a directory, FIFO, socket or device)")
            }
            ReadError::TooLarge(limit) => write!(f, "larger than the limit of {limit} bytes"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Opens `path` for reading without blocking on a FIFO and, unless `follow`, without
/// following a symbolic link in the last component.
fn open_read(path: &Path, follow: bool) -> Result<File, ReadError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        if !follow {
            flags |= libc::O_NOFOLLOW;
        }
        o.custom_flags(flags);
    }
    if !follow
        && std::fs::symlink_metadata(path)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false)
    {
        return Err(ReadError::Symlink);
    }
    o.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) && !follow {
            return ReadError::Symlink;
        }
        ReadError::Io(e)
    })
}

/// Reads `path` when it is a regular file (checked on the open file) of at most `limit`
/// bytes. With `follow == false` a symbolic link is refused ([`ReadError::Symlink`]).
pub fn read_regular(path: &Path, limit: u64, follow: bool) -> Result<Vec<u8>, ReadError> {
    let file = open_read(path, follow)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: u64, follow: bool) -> Result<String, ReadError> {
    let bytes = read_regular(path, limit, follow)?;
    String::from_utf8(bytes).map_err(|e| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not valid UTF-8 (first invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

/// How [`write_atomic`] treats the target path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteTarget {
    /// A file the user named (`--output`, `--write-baseline`): a relative path must stay
    /// inside the working directory and pass through no symbolic link; missing parent
    /// directories are created (never through a link). An absolute path is the user's
    /// explicit choice: its parents are taken as they are.
    Named,
    /// A file that exists and was analysed (`--fix`): it must still be a regular file (not
    /// a symbolic link); its permissions are kept.
    Existing,
}

/// `p` with `.` dropped and `..` resolved lexically against the component before it (no
/// file system access): `a/./b/../c` → `a/c`. A `..` at the root stays at the root; a
/// leading `..` of a relative path is kept (`../x` stays `../x`).
pub fn lexical_normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn symlink_at(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

/// Checks a relative `--output`-style path lexically (no `..` above the working directory)
/// and on disk (no symbolic link among the existing parents), creating the missing parent
/// directories one by one.
fn prepare_relative_parents(path: &Path) -> Result<(), String> {
    let mut depth: usize = 0;
    let comps: Vec<Component> = path.components().collect();
    for c in &comps {
        match c {
            Component::Normal(_) => depth += 1,
            Component::ParentDir => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    "it is outside the working directory (give an absolute path to write there)"
                        .to_string()
                })?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut at = PathBuf::new();
    for c in &comps[..comps.len().saturating_sub(1)] {
        at.push(c);
        if matches!(c, Component::CurDir) {
            continue;
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "`{}` is a symbolic link; not writing through it",
                    crate::text::escape_controls(&at.to_string_lossy())
                ));
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "`{}` is not a directory",
                    crate::text::escape_controls(&at.to_string_lossy())
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&at).map_err(|e| {
                    format!(
                        "could not create `{}`: {e}",
                        crate::text::escape_controls(&at.to_string_lossy())
                    )
                })?;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Writes `bytes` to `path`: to a new temporary file in the same directory, then renamed
/// over `path`, so a reader never sees a half-written file, a symbolic link at `path` is
/// replaced rather than followed, and an interrupted run leaves the old file. With
/// `expect` (for `--fix`), the current content must still be `expect` just before the
/// rename, so an edit saved meanwhile is not overwritten. Errors are sentences (the caller
/// names the file).
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    target: WriteTarget,
    expect: Option<&[u8]>,
) -> Result<(), String> {
    let mut mode = None;
    match target {
        WriteTarget::Named => {
            if path.is_relative() {
                prepare_relative_parents(path)?;
            } else if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("could not create its directory: {e}"))?;
            }
            match std::fs::symlink_metadata(path) {
                // A link to a device, pipe or socket (`/dev/stdout` → `/proc/self/fd/1`)
                // names a stream, not a file: replacing the link would break it for
                // everyone, so it is refused like the stream itself.
                Ok(m)
                    if m.file_type().is_symlink()
                        && std::fs::metadata(path).is_ok_and(|t| !t.is_file()) =>
                {
                    return Err("it is a link to something that is not a regular file".into());
                }
                Ok(m) if m.file_type().is_symlink() || m.is_file() => {}
                Ok(_) => {
                    return Err("it exists and is not a regular file".into());
                }
                Err(_) => {}
            }
        }
        WriteTarget::Existing => {
            let m = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
            if m.file_type().is_symlink() {
                return Err("it is a symbolic link; not writing through it".into());
            }
            if !m.is_file() {
                return Err("not a regular file".into());
            }
            if m.permissions().readonly() {
                return Err("it is read-only".into());
            }
            mode = Some(m.permissions());
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| "it does not name a file".to_string())?;
    let mut tmp = None;
    for n in 0..100u32 {
        let mut t = std::ffi::OsString::from(".");
        t.push(name);
        t.push(format!(".idemlint-{}-{n}.tmp", std::process::id()));
        let candidate = dir.join(t);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("could not create a temporary file: {e}")),
        }
    }
    let Some((tmp_path, mut file)) = tmp else {
        return Err("could not create a temporary file".into());
    };
    let result = (|| {
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| e.to_string())?;
        if let Some(p) = mode {
            std::fs::set_permissions(&tmp_path, p).map_err(|e| e.to_string())?;
        }
        if let Some(expect) = expect {
            let now = read_regular(path, u64::MAX, false).map_err(|e| e.to_string())?;
            if now != expect {
                return Err("it changed on disk since it was analysed; not overwritten".into());
            }
        }
        if symlink_at(&dir.join(name)) && target == WriteTarget::Existing {
            return Err("it is a symbolic link; not writing through it".into());
        }
        std::fs::rename(&tmp_path, path).map_err(|e| e.to_string())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp_path);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normal_resolves_dots_without_the_file_system() {
        let n = |p: &str| lexical_normal(Path::new(p));
        assert_eq!(n("a/./b/../c"), PathBuf::from("a/c"));
        assert_eq!(n("/w/x/../../.."), PathBuf::from("/"));
        assert_eq!(n("../x"), PathBuf::from("../x"));
        assert_eq!(n("a/../../x"), PathBuf::from("../x"));
    }

    #[test]
    fn relative_targets_stay_inside() {
        assert!(prepare_relative_parents(Path::new("../x.json")).is_err());
        assert!(prepare_relative_parents(Path::new("a/../../x.json")).is_err());
    }
}
