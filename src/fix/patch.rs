//! The unified diff of a file before and after `--fix` (what `--diff`
//! prints), in the format `git apply` and `patch -p1` accept. The line
//! diff is the `similar` crate's; this module adds the file names as git
//! writes them, quoted where they hold unusual bytes.

use similar::TextDiff;

/// Lines of unchanged context around each change.
const CONTEXT: usize = 3;

/// The unified diff from `old` to `new` for the file shown as `path` (see
/// [`crate::shown_path`]); empty when the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let name = name_bytes(&crate::shown_path::unshown(path));
    // `a/` and `b/` make relative paths apply with `git apply` and `patch -p1`.
    let (old_name, new_name) = match name.starts_with(b"/") {
        true => (git_quoted(&name), git_quoted(&name)),
        false => (git_quoted(&[b"a/", &name[..]].concat()), git_quoted(&[b"b/", &name[..]].concat())),
    };
    let diff = TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified.context_radius(CONTEXT).header(&old_name, &new_name);
    unified.to_string()
}

/// The bytes of the name `path` (on Windows, its UTF-8).
fn name_bytes(path: &std::path::Path) -> Vec<u8> {
    #[cfg(unix)]
    return std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    return path.to_string_lossy().replace('\\', "/").into_bytes();
}

/// A file name as git writes it in a diff header: as it is, or in double
/// quotes with C escapes when it holds a control character, a quote, a
/// backslash or a byte outside ASCII (git's `core.quotePath`), which `git
/// apply` reads back to the same bytes.
fn git_quoted(name: &[u8]) -> String {
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if name.iter().all(|&b| plain(b)) {
        return String::from_utf8_lossy(name).into_owned();
    }
    let mut out = String::from("\"");
    for &b in name {
        match b {
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if plain(b) => out.push(char::from(b)),
            b => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::{git_quoted, unified};

    #[test]
    fn unusual_names_are_quoted_as_git_quotes_them() {
        assert_eq!(git_quoted(b"a/plain name.py"), "a/plain name.py");
        assert_eq!(git_quoted(b"a/ta\tb.py"), "\"a/ta\\tb.py\"");
        assert_eq!(git_quoted(b"a/back\\slash.py"), "\"a/back\\\\slash.py\"");
        assert_eq!(git_quoted(b"a/bad\xff.py"), "\"a/bad\\377.py\"");
        assert_eq!(git_quoted("a/modèle.py".as_bytes()), "\"a/mod\\303\\250le.py\"");
    }

    #[test]
    fn one_changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("x.py", old, new),
            "--- a/x.py\n+++ b/x.py\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn insertion_at_the_top_and_far_apart_changes_make_two_hunks() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = format!("0\n{}", old.replace("15\n", "fifteen\n"));
        let diff = unified("x.py", &old, &new);
        assert!(diff.contains("@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n"), "{diff}");
        assert!(diff.contains("@@ -12,7 +13,7 @@\n 12\n 13\n 14\n-15\n+fifteen\n 16\n 17\n 18\n"), "{diff}");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = unified("x.py", "a\nb", "a\nc");
        assert_eq!(
            diff,
            "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn equal_texts_give_no_diff() {
        assert_eq!(unified("x.py", "a\n", "a\n"), "");
    }

    #[test]
    fn deletion_only_hunk_names_the_line_before() {
        let diff = unified("x.py", "a\nb\n", "a\n");
        assert_eq!(diff, "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1 @@\n a\n-b\n");
    }

    #[test]
    fn an_absolute_path_is_named_as_it_is() {
        let diff = unified("/tmp/x.py", "a\n", "b\n");
        assert!(diff.starts_with("--- /tmp/x.py\n+++ /tmp/x.py\n@@ -1 +1 @@\n"), "{diff}");
    }
}
