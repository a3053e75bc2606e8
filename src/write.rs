//! Writing a source file back safely: never half-written (temporary file in
//! the same directory, fsync, rename), never over a file that changed since it
//! was read, and with the original permissions.

use std::io::Write;
use std::path::Path;

/// Replaces `path`'s contents with `new`, if the file still holds `expected`.
pub fn replace_file(path: &Path, expected: &[u8], new: &[u8]) -> Result<(), String> {
    let current = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if current != expected {
        return Err(format!("{} changed on disk while npu-mem was working; it was not written", path.display()));
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if meta.permissions().readonly() {
        return Err(format!("{} is read-only; it was not written", path.display()));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.npu-mem-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(new)?;
        f.sync_all()?;
        std::fs::set_permissions(&tmp, meta.permissions())?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::replace_file;

    #[test]
    fn a_file_changed_since_it_was_read_is_not_overwritten() {
        let dir = std::env::temp_dir().join(format!("npu-mem-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.py");
        std::fs::write(&path, "edited by someone else\n").unwrap();
        let err = replace_file(&path, b"what npu-mem read\n", b"fixed\n").unwrap_err();
        assert!(err.contains("changed on disk"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "edited by someone else\n");
        replace_file(&path, b"edited by someone else\n", b"fixed\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "fixed\n");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
