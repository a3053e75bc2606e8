//! Turns the built-in rule packs (`rules/*.toml`) into JSON for the binary to
//! embed (src/rules/packs.rs). The TOML stays the source; serde_json reads the
//! same packs several times faster than the TOML parser, whose allocations
//! were most of a one-file scan's start-up. A pack that is not valid TOML
//! fails the build here, with the TOML parser's message. The conversion is
//! the one user packs go through (src/rules/pack_json.rs), so that both
//! read the same. The data tables (`rules/data/*.tsv`) are embedded without
//! their `#` comment lines, which document a table's sources for its readers
//! and are skipped when it is parsed: the binary has a size limit (issue 14).

use std::fs;
use std::path::{Path, PathBuf};

// The build uses the conversion only, not the way back to TOML positions.
#[allow(dead_code)]
#[path = "src/rules/pack_json.rs"]
mod pack_json;

fn main() {
    println!("cargo::rerun-if-changed=rules");
    println!("cargo::rerun-if-changed=src/rules/pack_json.rs");
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("rules");
    let mut docs = serde_json::Map::new();
    convert_each("rules", "toml", &out, |path, text| {
        let pack = pack_json::PackJson::from_toml(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut pack: serde_json::Value = serde_json::from_str(&pack.json).expect("the conversion writes JSON");
        docs.extend(take_docs(&mut pack));
        // Written without the line breaks, which only placed tokens for error positions.
        (path.with_extension("json"), pack.to_string())
    });
    let docs = serde_json::Value::Object(docs).to_string();
    let deflated = out.join("docs.json.deflate");
    fs::write(&deflated, miniz_oxide::deflate::compress_to_vec(docs.as_bytes(), 10))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", deflated.display()));
    convert_each("rules/data", "tsv", &out.join("data"), |path, text| (path.to_path_buf(), without_comments(text)));
}

/// Takes the `docs` table out of each rule of `pack`, by the rule's code.
fn take_docs(pack: &mut serde_json::Value) -> Vec<(String, serde_json::Value)> {
    let rules = pack.get_mut("rule").and_then(serde_json::Value::as_array_mut);
    rules
        .into_iter()
        .flatten()
        .filter_map(|rule| {
            let code = rule.get("code")?.as_str()?.to_string();
            Some((code, rule.as_object_mut()?.remove("docs")?))
        })
        .collect()
}

/// Writes into `out`, for each file of `dir` with extension `ext`, what
/// `convert` makes of its text, under the file name it gives.
fn convert_each(dir: &str, ext: &str, out: &Path, mut convert: impl FnMut(&Path, &str) -> (PathBuf, String)) {
    fs::create_dir_all(out).unwrap_or_else(|e| panic!("cannot create {}: {e}", out.display()));
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {dir}/: {e}")) {
        let path = entry.unwrap_or_else(|e| panic!("cannot list {dir}/: {e}")).path();
        if path.extension().is_none_or(|e| e != ext) {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let (name, converted) = convert(&path, &text);
        let name = out.join(name.file_name().expect("a file name"));
        fs::write(&name, converted).unwrap_or_else(|e| panic!("cannot write {}: {e}", name.display()));
    }
}

/// `text` with each `#` comment line left empty, so that line numbers in a
/// table's error messages still point into its file.
fn without_comments(text: &str) -> String {
    text.split_inclusive('\n').map(|line| if line.starts_with('#') { "\n" } else { line }).collect()
}
