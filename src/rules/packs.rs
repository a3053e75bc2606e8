//! Loading packs: the built-in ones embedded at build time, and user packs
//! given with `--rules` (a file or a directory of `*.toml`).

use super::compile::{parse_pack, Compiler};
use super::engine::RuleSet;
use super::error::{DataError, PackError, PackProblem};
use super::schema::PackSpec;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The packs shipped in `rules/`, embedded in the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("rules/dataloader.toml", include_str!("../../rules/dataloader.toml")),
    ("rules/transfer.toml", include_str!("../../rules/transfer.toml")),
    ("rules/amp.toml", include_str!("../../rules/amp.toml")),
    ("rules/memory.toml", include_str!("../../rules/memory.toml")),
    ("rules/npu_api.toml", include_str!("../../rules/npu_api.toml")),
    ("rules/operators.toml", include_str!("../../rules/operators.toml")),
    ("rules/meta.toml", include_str!("../../rules/meta.toml")),
];

/// Data tables of the built-in packs, embedded in the binary.
pub const BUILTIN_DATA: &[(&str, &str)] = &[
    ("rules/data/torch_npu_names.tsv", include_str!("../../rules/data/torch_npu_names.tsv")),
    ("rules/data/torch_cuda_to_npu.tsv", include_str!("../../rules/data/torch_cuda_to_npu.tsv")),
    ("rules/data/npu_alloc_conf.tsv", include_str!("../../rules/data/npu_alloc_conf.tsv")),
    ("rules/data/cuda_only_helpers.tsv", include_str!("../../rules/data/cuda_only_helpers.tsv")),
    ("rules/data/torchvision_ops_on_npu.tsv", include_str!("../../rules/data/torchvision_ops_on_npu.tsv")),
    ("rules/data/torch_accelerator.tsv", include_str!("../../rules/data/torch_accelerator.tsv")),
    ("rules/data/torch_npu_ops.tsv", include_str!("../../rules/data/torch_npu_ops.tsv")),
    ("rules/data/attention_on_npu.tsv", include_str!("../../rules/data/attention_on_npu.tsv")),
    ("rules/data/cuda_only_libraries.tsv", include_str!("../../rules/data/cuda_only_libraries.tsv")),
    ("rules/data/npu_cpu_fallbacks.tsv", include_str!("../../rules/data/npu_cpu_fallbacks.tsv")),
];

/// Compiles the built-in packs plus the user packs at `extra`.
pub fn load(extra: &[PathBuf]) -> Result<RuleSet, PackError> {
    load_with(extra, true)
}

/// [`load`], with the built-in packs' regexes compiled on first use when
/// `defer_builtin_regexes`, or now (as for user packs, so a test can check them).
fn load_with(extra: &[PathBuf], defer_builtin_regexes: bool) -> Result<RuleSet, PackError> {
    let mut sources: Vec<(String, String)> = BUILTIN.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    for path in extra {
        for file in pack_files(path)? {
            let text = std::fs::read_to_string(&file).map_err(|e| PackError {
                origin: file.display().to_string(),
                line: None,
                column: None,
                problem: Box::new(PackProblem::Unreadable(e)),
            })?;
            sources.push((file.display().to_string(), text));
        }
    }
    let mut compiler = Compiler::default();
    let mut set = RuleSet {
        rules: Vec::new(),
        tables: Vec::new(),
        counts: Vec::new(),
        sites: Vec::new(),
        groups: Vec::new(),
        notes: Vec::new(),
        compiler: Compiler::default(),
        fingerprint: 0,
    };
    // Every pack and data text read feeds the fingerprint, in load order.
    let fingerprint = std::cell::Cell::new(crate::hash::fnv1a(b"npu-mem rule packs"));
    let feed = |text: &str| fingerprint.set(crate::hash::fnv1a_extend(fingerprint.get(), text.as_bytes()));
    // Parsing the TOML is most of the cost of loading; it needs no shared state.
    let specs: Vec<PackSpec> =
        sources.par_iter().map(|(origin, text)| parse_pack(origin, text)).collect::<Result<_, _>>()?;
    let mut codes = HashSet::new();
    for ((origin, text), spec) in sources.iter().zip(specs) {
        let builtin = BUILTIN.iter().any(|(n, _)| n == origin);
        compiler.defer_regexes = builtin && defer_builtin_regexes;
        let base = Path::new(origin).parent().map(Path::to_path_buf).unwrap_or_default();
        feed(text);
        let read_data = |file: &str| -> Result<String, DataError> {
            let text = if builtin {
                let name = format!("rules/{file}");
                match BUILTIN_DATA.iter().find(|(n, _)| *n == name) {
                    Some((_, t)) => t.to_string(),
                    None => return Err(DataError::NotEmbedded { name }),
                }
            } else {
                let path = base.join(file);
                std::fs::read_to_string(&path).map_err(|source| DataError::Unreadable { path, source })?
            };
            feed(&text);
            Ok(text)
        };
        let pack = compiler.compile_pack(origin, text, spec, &read_data)?;
        for rule in &pack.rules {
            if !codes.insert(rule.code.clone()) {
                return Err(PackError {
                    origin: origin.clone(),
                    line: text.find(&format!("\"{}\"", rule.code)).map(|i| text[..i].matches('\n').count() + 1),
                    column: None,
                    problem: Box::new(PackProblem::DuplicateCode { code: rule.code.to_string() }),
                });
            }
        }
        set.rules.extend(pack.rules);
        set.tables.extend(pack.tables);
        set.counts.extend(pack.counts);
        set.sites.extend(pack.sites);
        set.groups.extend(pack.groups);
        set.notes.extend(pack.notes);
    }
    for rule in &set.rules {
        let then = rule.fix.as_ref().map_or(&[][..], |f| f.then.as_slice());
        if let Some(code) = then.iter().find(|c| !set.rules.iter().any(|r| &r.code == *c && r.fix.is_some())) {
            return Err(PackError {
                origin: "rule packs".into(),
                line: None,
                column: None,
                problem: Box::new(PackProblem::ThenNotFixable { rule: rule.code.to_string(), code: code.to_string() }),
            });
        }
        let together = rule.fix.as_ref().and_then(|f| f.together.as_ref()).map_or(&[][..], |t| t.codes.as_slice());
        if let Some(code) = together.iter().find(|c| !codes.contains(c.as_str())) {
            return Err(PackError {
                origin: "rule packs".into(),
                line: None,
                column: None,
                problem: Box::new(PackProblem::UnknownTogether { rule: rule.code.to_string(), code: code.to_string() }),
            });
        }
    }
    for count in &set.counts {
        if let super::model::CountSource::Rule(code) = &count.source {
            if !codes.contains(code.as_str()) {
                return Err(PackError {
                    origin: "rule packs".into(),
                    line: None,
                    column: None,
                    problem: Box::new(PackProblem::UnknownCountRule { label: count.label.clone(), code: code.clone() }),
                });
            }
        }
    }
    compiler.file_extensions.sort();
    compiler.file_extensions.dedup();
    set.compiler = compiler;
    set.fingerprint = fingerprint.get();
    Ok(set)
}

/// `path` itself, or the `*.toml` files directly inside it, sorted.
fn pack_files(path: &Path) -> Result<Vec<PathBuf>, PackError> {
    let err = |problem| PackError {
        origin: path.display().to_string(),
        line: None,
        column: None,
        problem: Box::new(problem),
    };
    let meta = std::fs::metadata(path).map_err(|e| err(PackProblem::NoPath(e)))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| err(PackProblem::Unlisted(e)))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(err(PackProblem::NoPacks));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    /// The built-in packs defer their regexes, which then can no longer report
    /// an error; so every one of them must compile here.
    #[test]
    fn every_builtin_regex_compiles() {
        if let Err(e) = super::load_with(&[], false) {
            panic!("{e}");
        }
    }
}
