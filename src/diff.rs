//! Changed-lines gating: `--diff-base REV` keeps only findings on lines added
//! or changed since REV, read from `git diff`; untracked files count as changed.

use crate::finding::Finding;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines added or changed per file (absolute paths); `None` means the whole file.
pub struct ChangedLines {
    files: HashMap<PathBuf, Option<Vec<(usize, usize)>>>,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("--diff-base needs git on the PATH: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl ChangedLines {
    /// Reads what changed since `rev` in the git repository around `dir`.
    pub fn since(rev: &str, dir: &Path) -> Result<Self, String> {
        let dir =
            if dir.is_dir() { dir.to_path_buf() } else { dir.parent().map(Path::to_path_buf).unwrap_or_default() };
        let root = git(&dir, &["rev-parse", "--show-toplevel"])
            .map_err(|_| format!("--diff-base needs a git repository, and {} is not inside one", dir.display()))?;
        let root = PathBuf::from(root.trim());
        git(&root, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
            .map_err(|_| format!("--diff-base {rev}: no such commit in {}", root.display()))?;
        let diff = git(&root, &["diff", "--unified=0", "--no-color", "--no-ext-diff", rev, "--"])?;
        let mut files: HashMap<PathBuf, Option<Vec<(usize, usize)>>> = HashMap::new();
        let mut current: Option<PathBuf> = None;
        for line in diff.lines() {
            if let Some(path) = line.strip_prefix("+++ ") {
                current = path.strip_prefix("b/").map(|p| root.join(p));
                if let Some(p) = &current {
                    files.entry(p.clone()).or_insert_with(|| Some(Vec::new()));
                }
            } else if let (Some(hunk), Some(path)) = (line.strip_prefix("@@ "), &current) {
                if let Some(range) = added_range(hunk) {
                    if let Some(Some(ranges)) = files.get_mut(path) {
                        ranges.push(range);
                    }
                }
            }
        }
        for path in git(&root, &["ls-files", "--others", "--exclude-standard", "-z"])?.split('\0') {
            if !path.is_empty() {
                files.insert(root.join(path), None);
            }
        }
        let files = files.into_iter().map(|(p, r)| (std::fs::canonicalize(&p).unwrap_or(p), r)).collect();
        Ok(ChangedLines { files })
    }

    /// Whether `f` is on an added or changed line.
    pub fn touches(&self, f: &Finding) -> bool {
        let path = std::fs::canonicalize(&f.path).unwrap_or_else(|_| PathBuf::from(&f.path));
        match self.files.get(&path) {
            None => false,
            Some(None) => true,
            // In a notebook, the line of the finding's source string in the JSON.
            Some(Some(ranges)) => ranges.iter().any(|(start, end)| (*start..=*end).contains(&f.region_in_file().0)),
        }
    }
}

/// The new-side line range of a hunk header `-a,b +c,d @@`; `None` when it only deletes.
fn added_range(hunk: &str) -> Option<(usize, usize)> {
    let plus = hunk.split_whitespace().find(|w| w.starts_with('+'))?;
    let mut parts = plus[1..].split(',');
    let start: usize = parts.next()?.parse().ok()?;
    let count: usize = parts.next().map_or(Some(1), |c| c.parse().ok())?;
    (count > 0).then(|| (start, start + count - 1))
}

#[cfg(test)]
mod tests {
    use super::added_range;

    #[test]
    fn hunk_headers() {
        assert_eq!(added_range("-3,0 +4,2 @@ def f():"), Some((4, 5)));
        assert_eq!(added_range("-10 +10 @@"), Some((10, 10)));
        assert_eq!(added_range("-5,2 +4,0 @@"), None);
    }
}
