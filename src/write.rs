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
