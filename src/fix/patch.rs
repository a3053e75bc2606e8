//! The unified diff of a file before and after `--fix` (what `--diff`
//! prints), in the format `git apply` and `patch -p1` accept. The line
//! diff is the `similar` crate's; this module adds the file names as git
//! writes them.

use similar::TextDiff;

/// Lines of unchanged context around each change.
const CONTEXT: usize = 3;

/// The unified diff from `old` to `new` for the file shown as `path`; empty
/// when the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    // `a/` and `b/` make relative paths apply with `git apply` and `patch -p1`.
    let (old_name, new_name) = match path.starts_with('/') {
        true => (path.to_string(), path.to_string()),
        false => (format!("a/{path}"), format!("b/{path}")),
    };
    let diff = TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified.context_radius(CONTEXT).header(&old_name, &new_name);
    unified.to_string()
}

#[cfg(test)]
mod tests {
    use super::unified;

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
