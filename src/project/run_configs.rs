//! What the configuration files of the named runs select. Frameworks build
//! much of a run from its configuration, not from imports:
//!
//! - Hydra and OmegaConf instantiate `_target_: pkg.mod.Class`: that module
//!   runs although nothing imports it. The configs are those the launch
//!   lines pass (`--cfg configs/x.yaml`), the directory that
//!   `@hydra.main(config_path="conf")` names, and the structured configs of
//!   the reached code (`_target_: str = "pkg.Net"`).
//! - Registries (mmcv/mmdet `@MODELS.register_module()`, detectron2 and
//!   fvcore `@BACKBONE_REGISTRY.register()`) build the class a config names
//!   (`type='ResNet'`, `META_ARCHITECTURE: GeneralizedRCNN`). A registered
//!   class that no config of the run and no code it reaches names as a
//!   string is not built, so its code does not run. The configs are those
//!   the launch lines pass, with the files their `_base_` names.
//!
//! What cannot be read keeps code reached: a `config_path` that is not a
//! literal, a `_base_` file that is not there, or runs that pass no
//! config file at all leave every registered class selected.

use crate::walk::ScanFile;
use regex::Regex;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Larger configuration files are not read (a data file, not a config).
const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// At most this many files are read from a Hydra configuration directory.
const MAX_CONFIG_FILES: usize = 2000;

/// `@hydra.main(... config_path="conf" ...)`: the literal directory.
static HYDRA_MAIN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"@hydra\.main\(([^)]*)\)"#).expect("a valid pattern"));
static CONFIG_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"config_path\s*=\s*(?:["']([^"']*)["']|None)"#).expect("a valid pattern"));
/// `_target_: a.b.C`, `"_target_": "a.b.C"`, `_target_="a.b.C"` or, in a
/// structured config, `_target_: str = "a.b.C"`.
static TARGET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"["']?_target_["']?\s*(?::\s*str\s*=|[:=])\s*["']?([A-Za-z_][\w.]*)"#).expect("a valid pattern")
});
/// A quoted name (`'ResNet'`) or a YAML value (`type: ResNet`, `- ResNet`).
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"["']([A-Za-z_][\w.]*)["']|(?m)(?:^|[:\-])[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:#.*)?$"#)
        .expect("a valid pattern")
});
/// In code, a name given where a registry reads it: `type='FocalLoss'`,
/// `{'type': 'FPN'}`, or a configuration default such as
/// `_C.MODEL.META_ARCHITECTURE = "GeneralizedRCNN"` (an upper-case key); a
/// quoted name elsewhere (`__all__ = ['ResNet', ...]`) selects nothing.
static CODE_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:\btype\s*=\s*|["']type["']\s*:\s*|\b[A-Z][A-Z0-9_]*\s*=\s*)["']([A-Za-z_][\w.]*)["']"#)
        .expect("a valid pattern")
});
/// In a Python configuration, a `type` it computes (`type=norm_type`).
static COMPUTED_TYPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\btype\s*=\s*[A-Za-z_]"#).expect("a valid pattern"));
/// `_base_ = '../x.py'` or `_base_ = ['a.py', 'b.py']`, up to the list's end.
static BASE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?s)_base_\s*=\s*(\[[^\]]*\]|["'][^"']*["'])"#).expect("a valid pattern"));
/// A registering decorator and its arguments.
static REGISTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*@[\w.]+\.(?:register_module|register)\(([^)]*)\)\s*$"#).expect("a valid pattern")
});

/// What the runs' configurations say.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// The dotted names that `_target_` entries instantiate.
    pub targets: BTreeSet<String>,
    /// Every name the configurations give as a value (`type='ResNet'`); `None`
    /// when a configuration cannot be read, or the runs pass none.
    pub names: Option<HashSet<String>>,
    /// The projects where `@hydra.main` names its configs in a way that
    /// cannot be read: every module there may be instantiated.
    pub undecided: BTreeSet<usize>,
}

/// Reads the configuration files that `arguments` (the words of the runs'
/// launch lines, relative to `bases`) name, and those that the `scripts`
/// (reached Python files, with their text) name with `@hydra.main`.
pub(crate) fn read(arguments: &[&str], bases: &[PathBuf], scripts: &[(&ScanFile, &str)]) -> Selection {
    let mut selection = Selection::default();
    let mut names = HashSet::new();
    let mut complete = true;
    let mut seen = HashSet::new();
    let mut todo: Vec<PathBuf> = arguments
        .iter()
        .filter(|w| is_config(w))
        .flat_map(|w| bases.iter().map(move |b| crate::config::absolute(&b.join(w))))
        .filter(|p| p.is_file())
        .collect();
    let passed = !todo.is_empty();
    while let Some(path) = todo.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let Some(text) = small_text(&path).filter(|t| !COMPUTED_TYPE.is_match(t)) else {
            complete = false;
            continue;
        };
        read_config(&text, &mut selection.targets, &mut names);
        for base in bases_of(&text) {
            let next = crate::config::absolute(&path.parent().unwrap_or(Path::new(".")).join(&base));
            match next.is_file() {
                true => todo.push(next),
                false => complete = false,
            }
        }
    }
    for (file, text) in scripts {
        for hydra in HYDRA_MAIN.captures_iter(text) {
            let dir = match CONFIG_PATH.captures(&hydra[1]) {
                Some(c) => c.get(1).map(|m| m.as_str().to_string()),
                // Named by something else than a literal.
                None if hydra[1].contains("config_path") => {
                    selection.undecided.insert(file.project);
                    continue;
                }
                // No directory: the configs are the code's own (structured configs, read below).
                None => None,
            };
            let Some(dir) = dir else { continue };
            let root = file.path().parent().map_or_else(|| PathBuf::from(dir.as_str()), |p| p.join(&dir));
            for path in yaml_under(&root) {
                if let Some(text) = small_text(&path) {
                    read_config(&text, &mut selection.targets, &mut names);
                }
            }
        }
        // Names the reached code itself gives (`build_loss(dict(type='FocalLoss'))`), and
        // the targets of its structured configs (`_target_: str = "pkg.Net"` in a dataclass).
        names.extend(CODE_NAMED.captures_iter(text).map(|c| c[1].to_string()));
        selection.targets.extend(TARGET.captures_iter(text).map(|c| c[1].to_string()));
    }
    selection.names = (passed && complete).then_some(names);
    selection
}

/// Whether a launch word names a configuration file.
fn is_config(word: &str) -> bool {
    let path = word.rsplit_once('=').map_or(word, |(_, value)| value);
    [".yaml", ".yml", ".py", ".json"].iter().any(|e| path.ends_with(e)) && !path.contains('$')
}

/// Adds a configuration's `_target_` names and the names it gives as values.
fn read_config(text: &str, targets: &mut BTreeSet<String>, names: &mut HashSet<String>) {
    targets.extend(TARGET.captures_iter(text).map(|c| c[1].to_string()));
    for c in NAMED.captures_iter(text) {
        names.extend(c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()));
    }
}

/// The files a config's `_base_` names.
fn bases_of(text: &str) -> Vec<String> {
    let Some(c) = BASE.captures(text) else { return Vec::new() };
    let quoted = Regex::new(r#"["']([^"']+)["']"#).expect("a valid pattern");
    quoted.captures_iter(&c[1]).map(|q| q[1].to_string()).collect()
}

/// The text of a file no larger than [`MAX_CONFIG_BYTES`].
fn small_text(path: &Path) -> Option<String> {
    let small = path.metadata().is_ok_and(|m| m.len() <= MAX_CONFIG_BYTES);
    small.then(|| std::fs::read(path).ok()).flatten().map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The YAML files under `dir`, at most [`MAX_CONFIG_FILES`].
fn yaml_under(dir: &Path) -> Vec<PathBuf> {
    let walk = ignore::WalkBuilder::new(dir).standard_filters(false).build();
    let yaml = |p: &Path| p.extension().is_some_and(|e| e == "yaml" || e == "yml");
    walk.flatten().map(|e| e.into_path()).filter(|p| yaml(p)).take(MAX_CONFIG_FILES).collect()
}

/// A class registered with a registry, and the names it is built by.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Registered {
    /// The first line (of its decorators) and the last line of the class.
    pub lines: (usize, usize),
    /// Its name and the names the decorator registers it under; empty when
    /// the decorator gives a name that is not a literal (it may be any).
    pub names: Vec<String>,
}

/// The registered classes of a Python file's text.
pub(crate) fn registered_classes(text: &str) -> Vec<Registered> {
    if !text.contains("register") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = REGISTER.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let first = i;
        let arguments = c[1].to_string();
        // Other decorators may stand between it and the class.
        let mut j = i + 1;
        while j < lines.len() && lines[j].trim_start().starts_with('@') {
            j += 1;
        }
        let Some(name) = lines.get(j).and_then(|l| class_name(l)) else {
            i += 1;
            continue;
        };
        let indent = indentation(lines[j]);
        let mut last = j;
        for (k, line) in lines.iter().enumerate().skip(j + 1) {
            let code = line.trim_start();
            if code.is_empty() || code.starts_with('#') {
                continue;
            }
            if indentation(line) <= indent {
                break;
            }
            last = k;
        }
        out.push(Registered { lines: (first + 1, last + 1), names: names_of(name, &arguments) });
        i = last + 1;
    }
    out
}

/// The class name a `class` line defines.
fn class_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("class ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The names a class is registered under: its own, and those the decorator
/// gives as literals (`register_module(name='X')`); none when it gives
/// another name it computes.
fn names_of(class: &str, arguments: &str) -> Vec<String> {
    let given = arguments.split(',').map(str::trim).filter(|a| !a.starts_with("force") && !a.starts_with("module"));
    let mut names = vec![class.to_string()];
    for a in given.filter(|a| !a.is_empty()) {
        let value = a.strip_prefix("name").map_or(a, |v| v.trim_start().trim_start_matches('=').trim());
        let quoted = value.trim_matches(|c: char| c == '[' || c == ']' || c.is_whitespace());
        let literal = quoted.trim_matches(|c| c == '"' || c == '\'');
        let name_like = !literal.is_empty() && literal.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        if !(quoted.starts_with(['"', '\'']) && name_like) {
            return Vec::new();
        }
        names.push(literal.to_string());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_classes_span_their_decorators_and_body() {
        let text =
            "import x\n\n@MODELS.register_module()\nclass ResNet(nn.Module):\n    def f(self):\n\n        return 1\n\n\
                    @BACKBONES.register_module(name='Swin', force=True)\n@other\nclass SwinT:\n    pass\n\
                    @REG.register(name=computed)\nclass Dyn:\n    pass\ndef g():\n    pass\n";
        let found = registered_classes(text);
        let names: Vec<(usize, usize, Vec<&str>)> =
            found.iter().map(|r| (r.lines.0, r.lines.1, r.names.iter().map(String::as_str).collect())).collect();
        assert_eq!(names, [(3, 7, vec!["ResNet"]), (9, 12, vec!["SwinT", "Swin"]), (13, 15, vec![])]);
    }

    #[test]
    fn a_config_that_cannot_be_read_selects_every_class() {
        let dir = std::env::temp_dir().join(format!("npu-mem-run-configs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("read.py"), "model = dict(type='ResNet')\n").unwrap();
        std::fs::write(dir.join("computed.py"), "norm = 'BN'\nmodel = dict(type='ResNet', norm=dict(type=norm))\n")
            .unwrap();
        std::fs::write(dir.join("missing_base.py"), "_base_ = './gone.py'\n").unwrap();
        let names = |word: &str| read(&[word], std::slice::from_ref(&dir), &[]).names;
        assert!(names("read.py").is_some_and(|n| n.contains("ResNet")));
        assert_eq!(names("computed.py"), None);
        assert_eq!(names("missing_base.py"), None);
        // No configuration passed: nothing is known.
        assert_eq!(names("--amp"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hydra_without_a_config_directory_reads_the_structured_configs_of_the_code() {
        let file = ScanFile::new(PathBuf::from("train.py"), "train.py".into(), crate::walk::FileKind::Python, 0);
        let code = "@hydra.main(config_name=\"config\")\ndef main(cfg): ...\n\
                    @dataclass\nclass ModelConfig:\n    _target_: str = \"pkg.models.Net\"\n";
        let read_code = |text: &str| read(&[], &[], &[(&file, text)]);
        let selection = read_code(code);
        assert!(selection.undecided.is_empty());
        assert_eq!(selection.targets.into_iter().collect::<Vec<_>>(), ["pkg.models.Net"]);
        // A directory named by a computed value cannot be read.
        assert_eq!(read_code("@hydra.main(config_path=CONF_DIR)\ndef main(cfg): ...\n").undecided.len(), 1);
    }

    #[test]
    fn configs_give_targets_and_names() {
        let (mut targets, mut names) = (BTreeSet::new(), HashSet::new());
        read_config(
            "model:\n  _target_: pkg.models.Net\n  type: ResNet  # the backbone\n  layers:\n    - Bottleneck\n",
            &mut targets,
            &mut names,
        );
        read_config("model = dict(type='FasterRCNN', neck=dict(type=\"FPN\"))\n", &mut targets, &mut names);
        assert_eq!(targets.into_iter().collect::<Vec<_>>(), ["pkg.models.Net"]);
        for n in ["ResNet", "Bottleneck", "FasterRCNN", "FPN", "pkg.models.Net"] {
            assert!(names.contains(n), "{n}: {names:?}");
        }
        assert_eq!(bases_of("_base_ = [\n    '../base.py',\n    './sched.py'\n]\n"), ["../base.py", "./sched.py"]);
    }
}
