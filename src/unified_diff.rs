//! Unified diffs of a file before and after `--fix`, in the format `git apply`
//! and `patch -p1` accept. Lines are compared with Myers' O((N+M)D) algorithm
//! after trimming the common prefix and suffix, so a few edits in a large file
//! cost little.

use std::fmt::Write;

/// Lines of unchanged context around each change.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

/// The unified diff from `old` to `new` for the file shown as `path`; empty
/// when the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = line_ops(&a, &b);
    let mut out = String::new();
    // Each op with the old and new line index it starts at.
    let mut rows = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for op in ops {
        rows.push((op, i, j));
        match op {
            Op::Equal => (i, j) = (i + 1, j + 1),
            Op::Delete => i += 1,
            Op::Insert => j += 1,
        }
    }
    let changes: Vec<usize> = (0..rows.len()).filter(|&r| rows[r].0 != Op::Equal).collect();
    if changes.is_empty() {
        return out;
    }
    // `a/` and `b/` make relative paths apply with `git apply` and `patch -p1`.
    let (old_name, new_name) = match path.starts_with('/') {
        true => (path.to_string(), path.to_string()),
        false => (format!("a/{path}"), format!("b/{path}")),
    };
    let _ = writeln!(out, "--- {old_name}\n+++ {new_name}");
    let mut start = 0;
    while start < changes.len() {
        // Extend the hunk while the next change is within two contexts.
        let mut end = start;
        while end + 1 < changes.len() && changes[end + 1] - changes[end] <= 2 * CONTEXT {
            end += 1;
        }
        let first = changes[start].saturating_sub(CONTEXT);
        let last = (changes[end] + CONTEXT).min(rows.len() - 1);
        render_hunk(&mut out, &rows[first..=last], &a, &b);
        start = end + 1;
    }
    out
}

fn render_hunk(out: &mut String, rows: &[(Op, usize, usize)], a: &[&str], b: &[&str]) {
    let old_len = rows.iter().filter(|r| r.0 != Op::Insert).count();
    let new_len = rows.iter().filter(|r| r.0 != Op::Delete).count();
    // An empty side names the line before the hunk, as diff(1) does.
    let old_start = rows[0].1 + usize::from(old_len > 0);
    let new_start = rows[0].2 + usize::from(new_len > 0);
    let _ = writeln!(out, "@@ -{old_start},{old_len} +{new_start},{new_len} @@");
    for &(op, i, j) in rows {
        let (mark, line) = match op {
            Op::Equal => (' ', a[i]),
            Op::Delete => ('-', a[i]),
            Op::Insert => ('+', b[j]),
        };
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// The edit script turning `a` into `b`, line by line.
fn line_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let mut ops = vec![Op::Equal; prefix];
    ops.extend(myers(&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]));
    ops.extend(std::iter::repeat_n(Op::Equal, suffix));
    ops
}

/// Myers' shortest edit script. `trace[d]` keeps the furthest x on each
/// diagonal k in -d..=d before step d, which is all backtracking needs.
fn myers(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = n + m;
    let offset = max + 1;
    let mut v = vec![0isize; (2 * max + 3) as usize];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let at = |k: isize| (k + offset) as usize;
    'search: for d in 0..=max {
        trace.push(v[at(-d)..=at(d)].to_vec());
        for k in (-d..=d).step_by(2) {
            let mut x =
                if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) { v[at(k + 1)] } else { v[at(k - 1)] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                break 'search;
            }
        }
    }
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..trace.len() as isize).rev() {
        let row = &trace[d as usize];
        let get = |k: isize| row[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) { k + 1 } else { k - 1 };
        let prev_x = get(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Equal);
            (x, y) = (x - 1, y - 1);
        }
        ops.push(if x == prev_x { Op::Insert } else { Op::Delete });
        (x, y) = (prev_x, prev_y);
    }
    ops.extend(std::iter::repeat_n(Op::Equal, x as usize));
    ops.reverse();
    ops
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

    /// Applying the edit script to the old lines gives the new ones, on
    /// many random small texts over a tiny alphabet (so lines repeat).
    #[test]
    fn edit_scripts_reproduce_the_new_text() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..500 {
            let mut text = || (0..next(12)).map(|_| ["a\n", "b\n", "c\n"][next(3) as usize]).collect::<String>();
            let (old, new) = (text(), text());
            let a: Vec<&str> = old.split_inclusive('\n').collect();
            let b: Vec<&str> = new.split_inclusive('\n').collect();
            let (mut i, mut out) = (0, String::new());
            for op in super::line_ops(&a, &b) {
                match op {
                    super::Op::Equal => {
                        out.push_str(a[i]);
                        i += 1;
                    }
                    super::Op::Delete => i += 1,
                    super::Op::Insert => out.push_str(b[out.matches('\n').count()]),
                }
            }
            assert_eq!((out.as_str(), i), (new.as_str(), a.len()), "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn equal_texts_give_no_diff() {
        assert_eq!(unified("x.py", "a\n", "a\n"), "");
    }

    #[test]
    fn deletion_only_hunk_names_the_line_before() {
        let diff = unified("x.py", "a\nb\n", "a\n");
        assert_eq!(diff, "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,1 @@\n a\n-b\n");
    }
}
