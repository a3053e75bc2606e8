//! Turns the built-in rule packs (`rules/*.toml`) into JSON for the binary to
//! embed (src/rules/packs.rs). The TOML stays the source; serde_json reads the
//! same packs several times faster than the TOML parser, whose allocations
//! were most of a one-file scan's start-up. A pack that is not valid TOML
//! fails the build here, with the TOML parser's message.

use std::fs;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=rules");
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("rules");
    fs::create_dir_all(&out).expect("cannot create OUT_DIR/rules");
    for entry in fs::read_dir("rules").expect("cannot list rules/") {
        let path = entry.expect("cannot list rules/").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let pack: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json = serde_json::to_string(&pack).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.with_extension("json");
        let name = name.file_name().expect("a file name");
        fs::write(out.join(name), json).unwrap_or_else(|e| panic!("cannot write {}: {e}", name.display()));
    }
}
