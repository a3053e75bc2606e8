//! Loading packs: the built-in ones embedded at build time, and user packs
//! given with `--rules` (a file or a directory of `*.toml`).

use super::compile::{parse_pack, Compiler};
use super::engine::RuleSet;
use super::error::{DataError, PackError, PackProblem};
use super::schema::PackSpec;
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The packs shipped in `rules/`, embedded in the binary as the JSON that
/// build.rs makes of their TOML, by the name of their TOML file.
pub const BUILTIN: &[(&str, &str)] = &[
    ("rules/dataloader.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/dataloader.json"))),
    ("rules/transfer.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/transfer.json"))),
    ("rules/amp.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/amp.json"))),
    ("rules/memory.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/memory.json"))),
    ("rules/npu_api.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/npu_api.json"))),
    ("rules/operators.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/operators.json"))),
    ("rules/meta.toml", include_str!(concat!(env!("OUT_DIR"), "/rules/meta.json"))),
];

/// A built-in data table by its file name: its path in `rules/`, and its
/// text as build.rs embeds it.
macro_rules! data_table {
    ($file:literal) => {
        (concat!("rules/data/", $file), include_str!(concat!(env!("OUT_DIR"), "/rules/data/", $file)))
    };
}

/// Data tables of the built-in packs, embedded in the binary without their
/// comment lines (build.rs).
pub const BUILTIN_DATA: &[(&str, &str)] = &[
    data_table!("torch_npu_names.tsv"),
    data_table!("torch_cuda_to_npu.tsv"),
    data_table!("npu_alloc_conf.tsv"),
    data_table!("cuda_only_helpers.tsv"),
    data_table!("torchvision_ops_on_npu.tsv"),
    data_table!("torch_accelerator.tsv"),
    data_table!("torch_npu_ops.tsv"),
    data_table!("attention_on_npu.tsv"),
    data_table!("cuda_only_libraries.tsv"),
    data_table!("npu_cpu_fallbacks.tsv"),
    data_table!("hccl_dtypes.tsv"),
    data_table!("op_dtype_gaps.tsv"),
    data_table!("torch_dtypes.tsv"),
];

/// Compiles the built-in packs plus the user packs at `extra`.
pub fn load(extra: &[PathBuf]) -> Result<RuleSet, PackError> {
    load_with(extra, true)
}

/// [`load`], with the built-in packs trusted (see [`Compiler::trusted`]) when
/// `trust_builtin`, or checked as user packs are (so a test can check them).
fn load_with(extra: &[PathBuf], trust_builtin: bool) -> Result<RuleSet, PackError> {
    let mut sources: Vec<Source> = BUILTIN
        .iter()
        .map(|(origin, text)| Source { origin: origin.to_string(), text: Cow::Borrowed(text), builtin: true })
        .collect();
    for path in extra {
        for file in pack_files(path)? {
            let text = std::fs::read_to_string(&file).map_err(|e| PackError {
                origin: file.display().to_string(),
                line: None,
                column: None,
                problem: Box::new(PackProblem::Unreadable(e)),
            })?;
            sources.push(Source { origin: file.display().to_string(), text: Cow::Owned(text), builtin: false });
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
    let mut codes = HashSet::new();
    parse_while_compiling(&sources, |source, spec| {
        let (origin, builtin) = (&source.origin, source.builtin);
        // Error lines are read from a user's TOML; the embedded JSON has none.
        let text = if builtin { "" } else { source.text.as_ref() };
        compiler.trusted = builtin && trust_builtin;
        compiler.docs_embedded = builtin;
        let base = Path::new(origin).parent().map(Path::to_path_buf).unwrap_or_default();
        feed(&source.text);
        let read_data = |file: &str| -> Result<Cow<'static, str>, DataError> {
            let text = if builtin {
                let name = format!("rules/{file}");
                match BUILTIN_DATA.iter().find(|(n, _)| *n == name) {
                    Some((_, t)) => Cow::Borrowed(*t),
                    None => return Err(DataError::NotEmbedded { name }),
                }
            } else {
                let path = base.join(file);
                Cow::Owned(std::fs::read_to_string(&path).map_err(|source| DataError::Unreadable { path, source })?)
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
        Ok(())
    })?;
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

/// A pack to load: a built-in one as build.rs embedded it (JSON), or a user's TOML.
struct Source {
    /// The pack's path, as errors name it.
    origin: String,
    text: Cow<'static, str>,
    builtin: bool,
}

impl Source {
    fn parse(&self) -> Result<PackSpec, PackError> {
        if !self.builtin {
            return parse_pack(&self.origin, &self.text);
        }
        serde_json::from_str(&self.text).map_err(|e| PackError {
            origin: self.origin.clone(),
            line: None,
            column: None,
            problem: Box::new(PackProblem::Embedded(e)),
        })
    }
}

/// Parses every pack on the pool while `compile` takes, on this thread and
/// in load order, those parsed already: compiling is serial and parsing is
/// not, and overlapping the two shortens a one-file scan by milliseconds.
fn parse_while_compiling(
    sources: &[Source],
    mut compile: impl FnMut(&Source, PackSpec) -> Result<(), PackError>,
) -> Result<(), PackError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    rayon::in_place_scope(|scope| {
        for (i, source) in sources.iter().enumerate() {
            let sender = sender.clone();
            // The receiver outlives the scope and so every job: a send cannot fail.
            scope.spawn(move |_| drop(sender.send((i, source.parse()))));
        }
        let mut parsed: Vec<Option<Result<PackSpec, PackError>>> = sources.iter().map(|_| None).collect();
        for (i, source) in sources.iter().enumerate() {
            let spec = loop {
                if let Some(spec) = parsed[i].take() {
                    break spec;
                }
                let message = match receiver.try_recv() {
                    Ok(message) => Some(message),
                    // A pack still queued is parsed here (a pool of one thread has no other).
                    Err(_) if rayon::yield_now() == Some(rayon::Yield::Executed) => None,
                    // Every pack left is being parsed on another thread.
                    Err(_) => receiver.recv().ok(),
                };
                if let Some((j, spec)) = message {
                    parsed[j] = Some(spec);
                }
            };
            compile(source, spec?)?;
        }
        Ok(())
    })
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
    use super::*;
    use crate::rules::docs::RuleDocs;

    /// build.rs turns each built-in pack's TOML into the JSON the binary
    /// embeds, with the rules' docs kept apart: both must read as the same
    /// pack, and each rule's embedded docs as its TOML's.
    #[test]
    fn each_embedded_pack_reads_as_its_toml_does() {
        for (origin, json) in BUILTIN {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(origin);
            let toml = std::fs::read_to_string(&path).expect("the pack's TOML source");
            let mut from_toml = parse_pack(origin, &toml).unwrap_or_else(|e| panic!("{e}"));
            for rule in &mut from_toml.rule {
                let docs = rule.docs.take().unwrap_or_else(|| panic!("{origin}: {} has no docs", rule.code));
                let embedded = RuleDocs::Embedded;
                assert_eq!(format!("{docs:?}"), format!("{:?}", embedded.of(&rule.code)), "{}", rule.code);
            }
            let from_json: PackSpec = serde_json::from_str(json).expect("the embedded JSON");
            assert_eq!(format!("{from_toml:?}"), format!("{from_json:?}"), "{origin}");
        }
    }

    /// The built-in packs are trusted: their regexes and unused named
    /// matchers are not checked when they load, so every one of them must
    /// compile here.
    #[test]
    fn every_builtin_pack_compiles_when_checked_in_full() {
        if let Err(e) = load_with(&[], false) {
            panic!("{e}");
        }
    }

    #[test]
    fn a_user_rule_without_docs_is_refused_at_its_code() {
        let toml = "[pack]\nname = \"x\"\ndescription = \"d\"\n\n[[rule]]\ncode = \"EXT001\"\nname = \"gpu-call\"\n\
                    section = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\n[rule.match]\nmethod = \"gpu\"\n";
        let spec = parse_pack("p.toml", toml).expect("the schema leaves docs to the compiler");
        let no_data = |name: &str| Err(DataError::NotEmbedded { name: name.to_string() });
        let error = Compiler::default().compile_pack("p.toml", toml, spec, &no_data).err().expect("refused");
        let message = error.to_string();
        assert!(message.starts_with("p.toml:6: rule EXT001: docs: missing;"), "{message}");
        assert!(message.contains("`[rule.docs]`"), "{message}");
    }
}
