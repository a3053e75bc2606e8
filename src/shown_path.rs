//! How a path is shown to users and kept in reports and baselines: as it is
//! when it is valid UTF-8 without a backslash (nearly every path); otherwise
//! with each backslash doubled and each byte that is not UTF-8 written
//! `\xNN`. So two different paths never show alike (`back\slash.py` is not
//! `back/slash.py`, and the bytes `bad\xff.py` are not `bad\xfe.py`), and
//! [`unshown`] gives back the path itself.

use std::path::{Path, PathBuf};

/// The text that shows `path`, `/`-separated.
#[cfg(unix)]
pub fn shown(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\\') => text.to_string(),
        _ => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(&chunk.valid().replace('\\', "\\\\"));
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            out
        }
    }
}

/// The text that shows `path`, `/`-separated (on Windows, where a name
/// cannot hold `\`, the separator is turned into `/`).
#[cfg(not(unix))]
pub fn shown(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The path that [`shown`] shows as `text`.
#[cfg(unix)]
pub fn unshown(text: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    if !text.contains('\\') {
        return PathBuf::from(text);
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let escaped_byte = (b[i] == b'\\' && b.get(i + 1) == Some(&b'x'))
            .then(|| text.get(i + 2..i + 4).and_then(|hex| u8::from_str_radix(hex, 16).ok()))
            .flatten();
        match (b[i], b.get(i + 1), escaped_byte) {
            (b'\\', Some(b'\\'), _) => {
                out.push(b'\\');
                i += 2;
            }
            (_, _, Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// The path that [`shown`] shows as `text`.
#[cfg(not(unix))]
pub fn unshown(text: &str) -> PathBuf {
    PathBuf::from(text)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn path(bytes: &[u8]) -> PathBuf {
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }

    #[test]
    fn plain_paths_show_as_they_are() {
        for p in ["a/b.py", "données/modèle.py", "tab\there.py", "x"] {
            assert_eq!(shown(Path::new(p)), p);
            assert_eq!(unshown(p), Path::new(p));
        }
    }

    #[test]
    fn different_paths_never_show_alike_and_come_back_whole() {
        let paths: Vec<PathBuf> = [
            &b"back\\slash.py"[..],
            b"back/slash.py",
            b"bad\xff.py",
            b"bad\xfe.py",
            b"bad\\xff.py",
            b"bad\\\\xff.py",
            b"mixed\\\xc3.py",
        ]
        .iter()
        .map(|b| path(b))
        .collect();
        let texts: Vec<String> = paths.iter().map(|p| shown(p)).collect();
        for (i, a) in texts.iter().enumerate() {
            assert_eq!(unshown(a), paths[i], "{a}");
            for b in &texts[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(texts[0], "back\\\\slash.py");
        assert_eq!(texts[2], "bad\\xff.py");
    }
}
