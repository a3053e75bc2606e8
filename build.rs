//! Turns the built-in rule packs (`rules/*.toml`) into JSON for the binary to
//! embed (src/rules/packs.rs). The TOML stays the source; serde_json reads the
//! same packs several times faster than the TOML parser, whose allocations
//! were most of a one-file scan's start-up. A pack that is not valid TOML
//! fails the build here, with the TOML parser's message. The conversion is
//! the one user packs go through (src/rules/pack_json.rs), so that both
//! read the same.

use std::fs;
use std::path::Path;

// The build uses the conversion only, not the way back to TOML positions.
#[allow(dead_code)]
#[path = "src/rules/pack_json.rs"]
mod pack_json;

fn main() {
    println!("cargo::rerun-if-changed=rules");
    println!("cargo::rerun-if-changed=src/rules/pack_json.rs");
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("rules");
    fs::create_dir_all(&out).expect("cannot create OUT_DIR/rules");
    for entry in fs::read_dir("rules").expect("cannot list rules/") {
        let path = entry.expect("cannot list rules/").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let pack = pack_json::PackJson::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Its line breaks only place tokens for error positions (strings escape theirs).
        let json = pack.json.replace('\n', "");
        let name = path.with_extension("json");
        let name = name.file_name().expect("a file name");
        fs::write(out.join(name), json).unwrap_or_else(|e| panic!("cannot write {}: {e}", name.display()));
    }
}
