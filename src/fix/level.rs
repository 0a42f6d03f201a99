//! The Java language level fixes are written for: `java-version` from the configuration,
//! else read as plain text from the nearest `pom.xml` / `build.gradle(.kts)` (the build is
//! never run), else 8.

use std::path::Path;

/// Java 8: the oldest level still common (Android, payment SDKs); no `var`.
pub const DEFAULT_JAVA: u32 = 8;

/// The level for a file at `path`: `configured`, else the nearest build file's, else 8.
pub fn java_level(configured: Option<u32>, path: &Path) -> u32 {
    configured
        .or_else(|| from_build_files(path))
        .unwrap_or(DEFAULT_JAVA)
}

fn from_build_files(path: &Path) -> Option<u32> {
    let mut dir = path.parent();
    let mut depth = 0;
    while let Some(d) = dir {
        for name in ["pom.xml", "build.gradle.kts", "build.gradle"] {
            let p = d.join(name);
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if !meta.is_file() || meta.len() > 1 << 20 {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let level = if name == "pom.xml" {
                from_pom(&text)
            } else {
                from_gradle(&text)
            };
            // The nearest build file decides, even when it names no level.
            return level;
        }
        depth += 1;
        if depth > 64 {
            break;
        }
        dir = d.parent();
    }
    None
}

/// `1.8` → 8, `11` → 11, `"17"` → 17, `VERSION_1_8` → 8, `VERSION_17` → 17.
fn number(s: &str) -> Option<u32> {
    let s = s.trim().trim_matches(|c| c == '"' || c == '\'');
    let s = s.strip_prefix("JavaVersion.").unwrap_or(s);
    let s = s.strip_prefix("VERSION_").unwrap_or(s);
    let s = s.strip_prefix("JVM_").unwrap_or(s);
    let s = s.replace('_', ".");
    let s = s.strip_prefix("1.").unwrap_or(&s);
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok().filter(|v| (1..=99).contains(v))
}

/// The text of `<tag>…</tag>`.
fn xml_value<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let i = text.find(&open)? + open.len();
    let j = text[i..].find('<')? + i;
    Some(&text[i..j])
}

/// `maven.compiler.release`, then `<release>`, then `maven.compiler.source`, then `<source>`
/// (of the compiler plugin).
pub fn from_pom(text: &str) -> Option<u32> {
    [
        "maven.compiler.release",
        "release",
        "maven.compiler.source",
        "source",
    ]
    .iter()
    .find_map(|t| xml_value(text, t).and_then(number))
}

/// `sourceCompatibility = …`, `jvmTarget = …`, `JavaVersion.VERSION_X`, `languageVersion
/// = JavaLanguageVersion.of(X)`.
pub fn from_gradle(text: &str) -> Option<u32> {
    for key in ["sourceCompatibility", "jvmTarget", "release"] {
        for (i, _) in text.match_indices(key) {
            let rest = text[i + key.len()..].trim_start();
            let rest = rest
                .strip_prefix(".set(")
                .or_else(|| rest.strip_prefix('='))
                .unwrap_or(rest);
            let token: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || "._\"'".contains(*c))
                .collect();
            if let Some(v) = number(&token) {
                return Some(v);
            }
        }
    }
    if let Some(i) = text.find("JavaVersion.VERSION_") {
        let token: String = text[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || "._".contains(*c))
            .collect();
        return number(&token);
    }
    if let Some(i) = text.find("JavaLanguageVersion.of(") {
        return number(&text[i + "JavaLanguageVersion.of(".len()..]);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_from_build_text() {
        assert_eq!(
            from_pom(
                "<properties><maven.compiler.release>17</maven.compiler.release></properties>"
            ),
            Some(17)
        );
        assert_eq!(
            from_pom("<maven.compiler.source>1.8</maven.compiler.source>"),
            Some(8)
        );
        assert_eq!(
            from_pom("<configuration><release>11</release></configuration>"),
            Some(11)
        );
        assert_eq!(from_pom("<project></project>"), None);
        assert_eq!(from_gradle("sourceCompatibility = '1.8'"), Some(8));
        assert_eq!(
            from_gradle("java { sourceCompatibility = JavaVersion.VERSION_17 }"),
            Some(17)
        );
        assert_eq!(
            from_gradle("kotlinOptions { jvmTarget = \"1.8\" }"),
            Some(8)
        );
        assert_eq!(
            from_gradle("compileOptions { targetCompatibility JavaVersion.VERSION_11 }"),
            Some(11)
        );
        assert_eq!(
            from_gradle("toolchain { languageVersion = JavaLanguageVersion.of(21) }"),
            Some(21)
        );
        assert_eq!(from_gradle("plugins { id 'java' }"), None);
    }

    #[test]
    fn nearest_build_file_wins_and_config_overrides() {
        let dir = std::env::temp_dir().join(format!("idemlint-level-{}", std::process::id()));
        let sub = dir.join("app/src");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            dir.join("pom.xml"),
            "<maven.compiler.release>17</maven.compiler.release>",
        )
        .unwrap();
        assert_eq!(java_level(None, &sub.join("A.java")), 17);
        std::fs::write(dir.join("app/build.gradle"), "sourceCompatibility = 1.8").unwrap();
        assert_eq!(java_level(None, &sub.join("A.java")), 8);
        assert_eq!(java_level(Some(21), &sub.join("A.java")), 21);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            java_level(None, Path::new("/nonexistent/x/A.java")),
            DEFAULT_JAVA
        );
    }
}
