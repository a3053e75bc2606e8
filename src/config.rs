//! Project configuration: `[tool.npu-mem]` in `pyproject.toml`, or
//! `npu-mem.toml` / `.npu-mem.toml`, found in the scanned path's directory or
//! the nearest one above it (or given with `--config`). Command-line flags
//! override the file; `--show-settings` prints where each value came from.

use crate::finding::{Finding, Severity};
use clap::ValueEnum;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

mod error;
pub use error::{ConfigError, Place};

/// The keys a configuration file may set.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileSettings {
    /// Only these codes or prefixes.
    pub select: Option<Vec<String>>,
    /// Never these codes or prefixes.
    pub ignore: Option<Vec<String>>,
    /// Paths to skip (replaces the default: none).
    pub exclude: Option<Vec<String>>,
    /// Paths to skip in addition.
    pub extend_exclude: Option<Vec<String>>,
    /// Glob -> codes to ignore in matching files.
    pub per_file_ignores: Option<BTreeMap<String, Vec<String>>>,
    /// Code -> severity.
    pub severity: Option<BTreeMap<String, Severity>>,
    /// Extra rule packs, relative to the configuration file.
    pub rules: Option<Vec<String>>,
    /// torch_npu version.
    pub target: Option<String>,
    /// Gate threshold.
    pub fail_on: Option<FailOn>,
    /// Migration style: `auto`, `manual` or `detect`.
    pub migration: Option<Migration>,
    /// Which entry scripts count as run: `launched` or `all`.
    pub entries: Option<Entries>,
    /// The runs to scan: command lines, scripts or modules, relative to the file's directory.
    pub entry: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyTool>,
}

#[derive(Deserialize)]
struct PyTool {
    #[serde(rename = "npu-mem")]
    npu_mem: Option<FileSettings>,
}

/// Compiles a `per-file-ignores` glob: `*` and `?` stay within one path
/// component, `**` crosses directories, `{a,b}` is either.
pub fn per_file_glob(glob: &str) -> Result<globset::GlobMatcher, globset::Error> {
    let compiled = globset::GlobBuilder::new(glob).literal_separator(true).build()?;
    Ok(compiled.compile_matcher())
}

/// An `exclude` glob and the directory it is relative to.
#[derive(Debug, Clone)]
pub struct Exclude {
    /// The glob, in `.gitignore` syntax.
    pub glob: String,
    /// The configuration file's directory for globs from the file (as in
    /// ruff, so a tree is judged the same from wherever it is scanned); the
    /// current directory for `--exclude`. Absolute.
    pub base: PathBuf,
    /// Where it was written, to name in errors: `` FILE:LINE: `exclude` `` or `` `--exclude` ``.
    pub source: String,
}

/// `per-file-ignores` as configured: glob -> codes, the globs relative to `base`.
#[derive(Debug, Clone, Default)]
pub struct PerFileTable {
    /// The configuration file's directory (absolute), which globs with `/` are matched relative to.
    pub base: PathBuf,
    /// Glob -> codes or prefixes.
    pub globs: BTreeMap<String, Vec<String>>,
}

/// `path` made absolute against the current directory, with `.` and `..`
/// resolved lexically, so that two spellings of one path compare equal.
pub fn absolute(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` (a path as reported, relative to the current directory or absolute)
/// relative to the absolute directory `base`, `/`-separated; `None` when it is outside `base`.
pub fn relative_to(base: &Path, path: &str) -> Option<String> {
    let abs = absolute(&crate::shown_path::unshown(path));
    let rel = abs.strip_prefix(base).ok()?;
    Some(crate::shown_path::shown(rel))
}

/// A configuration file and what it sets.
pub struct Loaded {
    /// The file.
    pub path: PathBuf,
    /// Its text (for error locations).
    pub text: String,
    /// Its settings.
    pub settings: FileSettings,
}

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// A command-line flag.
    CommandLine,
    /// A configuration file (path and line of the key).
    File(String),
}

/// A setting's value and origin.
#[derive(Debug, Clone)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

/// Everything a scan is configured with.
pub struct Settings {
    /// Only these codes or prefixes (empty: all).
    pub select: Setting<Vec<String>>,
    /// Never these codes or prefixes.
    pub ignore: Setting<Vec<String>>,
    /// Paths to skip.
    pub exclude: Setting<Vec<Exclude>>,
    /// Glob -> codes.
    pub per_file_ignores: Setting<PerFileTable>,
    /// Code -> severity.
    pub severity: Setting<BTreeMap<String, Severity>>,
    /// Extra rule packs.
    pub rules: Setting<Vec<PathBuf>>,
    /// torch_npu version.
    pub target: Setting<String>,
    /// Gate threshold.
    pub fail_on: Setting<FailOn>,
    /// Migration style to assume (`detect`: per project, from its imports).
    pub migration: Setting<Migration>,
    /// Which entry scripts count as run (`launched`: those the project's launch scripts start).
    pub entries: Setting<Entries>,
    /// The runs the user names (`--entry`, `entry`): empty when none is.
    pub entry: Setting<Vec<NamedRun>>,
}

/// A run the user names: what they would type to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRun {
    /// A script (`train.py`), a module (`-m pkg.train`) or a whole command
    /// line (`bash scripts/train_8p.sh`, `python train.py --amp`).
    pub command: String,
    /// The directory it runs in, which its paths are relative to: the
    /// current directory for `--entry`, the configuration file's for `entry`. Absolute.
    pub base: PathBuf,
    /// Where it was written, to name in errors: `` FILE:LINE: `entry` `` or `` `--entry` ``.
    pub source: String,
}

impl Settings {
    /// Whether rule `code` runs: `select` names it (or is empty) and `ignore` does not.
    pub fn enables(&self, code: &str) -> bool {
        let (select, ignore) = (&self.select.value, &self.ignore.value);
        (select.is_empty() || select.iter().any(|s| code.starts_with(s.as_str())))
            && !ignore.iter().any(|s| code.starts_with(s.as_str()))
    }
}

/// The line of the first occurrence of `key` (as a TOML key, or as the last
/// part of a table header such as `[tool.npu-mem.severity]`) in `text`.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches('"');
            let header = t.starts_with('[') && t.trim_end().trim_end_matches(']').ends_with(key);
            header
                || t.starts_with(key)
                    && t[key.len()..].trim_start().trim_start_matches('"').trim_start().starts_with('=')
        })
        .map(|i| i + 1)
}

/// Where a value of setting `key` was written in `file`: the first line
/// from the key's on that holds `"value"`, else the key's line; `None`
/// without a file.
fn place(file: Option<&Loaded>, key: &str, value: &str) -> Option<Place> {
    let f = file?;
    let start = line_of(&f.text, key).unwrap_or(1);
    let quoted = format!("\"{value}\"");
    let line = f.text.lines().skip(start - 1).position(|l| l.contains(&quoted)).map_or(start, |i| start + i);
    Some(Place { path: f.path.clone(), line })
}

/// Reads `path` (a pyproject.toml without `[tool.npu-mem]` gives `None`).
pub fn read(path: &Path) -> Result<Option<Loaded>, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::Unreadable { path: path.to_path_buf(), source })?;
    // A byte order mark (some Windows editors write one) is not TOML.
    let text = text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text);
    let located = |source: toml::de::Error| {
        let line = source.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        ConfigError::Syntax { path: path.to_path_buf(), line, source: Box::new(source) }
    };
    let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
    let settings = if is_pyproject {
        let doc: Pyproject = toml::from_str(&text).map_err(located)?;
        match doc.tool.and_then(|t| t.npu_mem) {
            Some(s) => s,
            None => return Ok(None),
        }
    } else {
        toml::from_str(&text).map_err(located)?
    };
    Ok(Some(Loaded { path: path.to_path_buf(), text, settings }))
}

/// The configuration for a scan of `start`: the nearest file in it or above it.
pub fn discover(start: &Path) -> Result<Option<Loaded>, ConfigError> {
    let abs = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if abs.is_dir() { Some(abs.as_path()) } else { abs.parent() };
    while let Some(d) = dir {
        for name in ["npu-mem.toml", ".npu-mem.toml", "pyproject.toml"] {
            let candidate = d.join(name);
            if candidate.is_file() {
                if let Some(loaded) = read(&candidate)? {
                    return Ok(Some(loaded));
                }
            }
        }
        dir = d.parent();
    }
    Ok(None)
}

/// The lowest severity that makes `scan` exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Only errors.
    Error,
    /// Warnings and errors.
    Warning,
    /// Any finding.
    Info,
    /// Never fail because of findings.
    Never,
}

/// Which migration style to assume for each project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Migration {
    /// Automatic migration (`transfer_to_npu`) for every project: what it handles is advice.
    Auto,
    /// Manual migration for every project: every finding keeps its severity.
    Manual,
    /// Automatic for each project that imports `transfer_to_npu`, manual for the others.
    Detect,
}

impl Migration {
    /// The lowercase name, as written in the configuration file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Migration::Auto => "auto",
            Migration::Manual => "manual",
            Migration::Detect => "detect",
        }
    }
}

/// Which entry scripts count as run, for the advice on code no launch script runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Entries {
    /// Where a project's shell scripts start some of its entry scripts, the
    /// others (and the modules only they import) are advice, unless
    /// a command elsewhere in the project (a README step, a CI job) starts them; so are the functions that
    /// nothing in the project calls, the branches whose test fails with
    /// the options of every run the shell scripts start, and (in any
    /// project) the tests a skip limits to hosts with CUDA, where the file
    /// runs without transfer_to_npu.
    Launched,
    /// Every entry script counts as run: every finding keeps its severity.
    All,
}

impl Entries {
    /// The lowercase name, as written in the configuration file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Entries::Launched => "launched",
            Entries::All => "all",
        }
    }
}

/// The settings given on the command line: empty or `None` where not given.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    /// `--select`, as given (comma-separated pieces are split here).
    pub select: Vec<String>,
    /// `--ignore`, as given.
    pub ignore: Vec<String>,
    /// `--exclude` globs.
    pub exclude: Vec<String>,
    /// `--rules` packs.
    pub rule_packs: Vec<PathBuf>,
    /// `--target`.
    pub target: Option<String>,
    /// `--fail-on`.
    pub fail_on: Option<FailOn>,
    /// `--migration`.
    pub migration: Option<Migration>,
    /// `--entries`.
    pub entries: Option<Entries>,
    /// `--entry`, each a run.
    pub entry: Vec<String>,
}

/// Resolves the settings: command line over file over defaults.
pub fn resolve(args: &CommandLine, file: Option<&Loaded>) -> Settings {
    let from_file = |key: &str| {
        file.map(|f| Origin::File(format!("{}:{}", f.path.display(), line_of(&f.text, key).unwrap_or(1))))
            .unwrap_or(Origin::Default)
    };
    let fs = file.map(|f| &f.settings);
    let pick = |cli: Option<Vec<String>>, val: Option<&Vec<String>>, key: &str| match (cli, val) {
        (Some(v), _) => Setting { value: v, origin: Origin::CommandLine },
        (None, Some(v)) => Setting { value: v.clone(), origin: from_file(key) },
        (None, None) => Setting { value: Vec::new(), origin: Origin::Default },
    };
    // Empty pieces are kept, for `check_codes` to reject: `--ignore ""` must not silently mean nothing.
    let split = |v: &[String]| -> Option<Vec<String>> {
        (!v.is_empty()).then(|| v.iter().flat_map(|s| s.split(',')).map(|s| s.trim().to_string()).collect())
    };
    let config_dir = file.and_then(|f| absolute(&f.path).parent().map(Path::to_path_buf));
    let base = config_dir.clone().unwrap_or_else(|| absolute(Path::new(".")));
    // Values relative to a directory (globs, commands), each with where it was written: on the
    // command line relative to the current directory, in the file to the file's own.
    let written_in_file = |key: &str, values: &[String]| -> Vec<(String, PathBuf, String)> {
        let source = |v: &str| place(file, key, v).map_or(format!("`{key}`"), |at| format!("{at}: `{key}`"));
        values.iter().map(|v| (v.clone(), base.clone(), source(v))).collect()
    };
    let relative = |key: &str, cli: &[String], in_file: Option<&Vec<String>>| match (cli.is_empty(), in_file) {
        (false, _) => {
            let cwd = absolute(Path::new("."));
            let values = cli.iter().map(|v| (v.clone(), cwd.clone(), format!("`--{key}`"))).collect();
            Setting { value: values, origin: Origin::CommandLine }
        }
        (true, Some(values)) => Setting { value: written_in_file(key, values), origin: from_file(key) },
        (true, None) => Setting { value: Vec::new(), origin: Origin::Default },
    };
    let as_exclude = |(glob, base, source): (String, PathBuf, String)| Exclude { glob, base, source };
    let excludes = relative("exclude", &args.exclude, fs.and_then(|s| s.exclude.as_ref()));
    let mut exclude: Setting<Vec<Exclude>> =
        Setting { value: excludes.value.into_iter().map(as_exclude).collect(), origin: excludes.origin };
    if let Some(extra) = fs.and_then(|s| s.extend_exclude.as_ref()) {
        exclude.value.extend(written_in_file("extend-exclude", extra).into_iter().map(as_exclude));
        if exclude.origin == Origin::Default {
            exclude.origin = from_file("extend-exclude");
        }
    }
    let runs = relative("entry", &args.entry, fs.and_then(|s| s.entry.as_ref()));
    let rules_base = file.and_then(|f| f.path.parent().map(Path::to_path_buf)).unwrap_or_default();
    let mut rules: Vec<PathBuf> =
        fs.and_then(|s| s.rules.as_ref()).map(|r| r.iter().map(|p| rules_base.join(p)).collect()).unwrap_or_default();
    let rules_origin = if rules.is_empty() { Origin::Default } else { from_file("rules") };
    rules.extend(args.rule_packs.iter().cloned());
    Settings {
        select: pick(split(&args.select), fs.and_then(|s| s.select.as_ref()), "select"),
        ignore: pick(split(&args.ignore), fs.and_then(|s| s.ignore.as_ref()), "ignore"),
        exclude,
        per_file_ignores: match fs.and_then(|s| s.per_file_ignores.clone()) {
            Some(globs) => {
                Setting { value: PerFileTable { base: base.clone(), globs }, origin: from_file("per-file-ignores") }
            }
            None => Setting { value: PerFileTable::default(), origin: Origin::Default },
        },
        severity: match fs.and_then(|s| s.severity.clone()) {
            Some(v) => Setting { value: v, origin: from_file("severity") },
            None => Setting { value: BTreeMap::new(), origin: Origin::Default },
        },
        rules: Setting {
            origin: if args.rule_packs.is_empty() { rules_origin } else { Origin::CommandLine },
            value: rules,
        },
        target: match (&args.target, fs.and_then(|s| s.target.clone())) {
            (Some(t), _) => Setting { value: t.clone(), origin: Origin::CommandLine },
            (None, Some(t)) => Setting { value: t, origin: from_file("target") },
            (None, None) => Setting { value: "2.1".into(), origin: Origin::Default },
        },
        fail_on: match (args.fail_on, fs.and_then(|s| s.fail_on)) {
            (Some(f), _) => Setting { value: f, origin: Origin::CommandLine },
            (None, Some(f)) => Setting { value: f, origin: from_file("fail-on") },
            (None, None) => Setting { value: FailOn::Warning, origin: Origin::Default },
        },
        migration: match (args.migration, fs.and_then(|s| s.migration)) {
            (Some(m), _) => Setting { value: m, origin: Origin::CommandLine },
            (None, Some(m)) => Setting { value: m, origin: from_file("migration") },
            (None, None) => Setting { value: Migration::Detect, origin: Origin::Default },
        },
        entries: match (args.entries, fs.and_then(|s| s.entries)) {
            (Some(e), _) => Setting { value: e, origin: Origin::CommandLine },
            (None, Some(e)) => Setting { value: e, origin: from_file("entries") },
            (None, None) => Setting { value: Entries::Launched, origin: Origin::Default },
        },
        entry: Setting {
            value: runs.value.into_iter().map(|(command, base, source)| NamedRun { command, base, source }).collect(),
            origin: runs.origin,
        },
    }
}

/// Checks what the settings name: every code exists (`known` says whether a
/// code or prefix does) and none is empty (a prefix of every code, which
/// would select or ignore everything), every `per-file-ignores` glob compiles,
/// and the target is supported. Errors name the file and line, or the flag.
pub fn check_codes(
    settings: &Settings,
    file: Option<&Loaded>,
    known: &dyn Fn(&str) -> bool,
) -> Result<(), ConfigError> {
    let mut named: Vec<(&str, &Origin, &str)> = Vec::new();
    named.extend(settings.select.value.iter().map(|c| ("select", &settings.select.origin, c.as_str())));
    named.extend(settings.ignore.value.iter().map(|c| ("ignore", &settings.ignore.origin, c.as_str())));
    named.extend(settings.severity.value.keys().map(|c| ("severity", &settings.severity.origin, c.as_str())));
    let pfi = &settings.per_file_ignores;
    named.extend(pfi.value.globs.values().flatten().map(|c| ("per-file-ignores", &pfi.origin, c.as_str())));
    for (key, origin, code) in named {
        let at = place(file.filter(|_| *origin != Origin::CommandLine), key, code);
        let key = if *origin == Origin::CommandLine { format!("--{key}") } else { key.to_string() };
        if code.is_empty() {
            return Err(ConfigError::EmptyCode { at, key });
        }
        if !known(code) {
            return Err(ConfigError::UnknownCode { at, key, code: code.to_string() });
        }
    }
    for glob in pfi.value.globs.keys() {
        let at = place(file, "per-file-ignores", glob);
        if glob.is_empty() {
            return Err(ConfigError::EmptyGlob { at });
        }
        per_file_glob(glob).map_err(|source| ConfigError::BadGlob { at, glob: glob.clone(), source })?;
    }
    if !["2.1", "2.6", "2.14"].contains(&settings.target.value.as_str()) {
        return Err(ConfigError::Target { value: settings.target.value.clone() });
    }
    Ok(())
}

fn origin(o: &Origin) -> String {
    match o {
        Origin::Default => "default".into(),
        Origin::CommandLine => "command line".into(),
        Origin::File(place) => place.clone(),
    }
}

/// `--show-settings`: every resolved value and where it came from.
pub fn show(s: &Settings, file: Option<&Loaded>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "configuration file: {}", file.map_or("none".into(), |f| f.path.display().to_string()));
    let list = |v: &[String]| if v.is_empty() { "[]".to_string() } else { format!("[{}]", v.join(", ")) };
    let _ = writeln!(out, "select = {}  ({})", list(&s.select.value), origin(&s.select.origin));
    let _ = writeln!(out, "ignore = {}  ({})", list(&s.ignore.value), origin(&s.ignore.origin));
    let exclude: Vec<String> = s.exclude.value.iter().map(|e| e.glob.clone()).collect();
    let _ = writeln!(out, "exclude = {}  ({})", list(&exclude), origin(&s.exclude.origin));
    let pfi: Vec<String> =
        s.per_file_ignores.value.globs.iter().map(|(g, c)| format!("{g}: {}", c.join(", "))).collect();
    let _ = writeln!(out, "per-file-ignores = {}  ({})", list(&pfi), origin(&s.per_file_ignores.origin));
    let sev: Vec<String> = s.severity.value.iter().map(|(c, v)| format!("{c}: {v}")).collect();
    let _ = writeln!(out, "severity = {}  ({})", list(&sev), origin(&s.severity.origin));
    let rules: Vec<String> = s.rules.value.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(out, "rules = {}  ({})", list(&rules), origin(&s.rules.origin));
    let _ = writeln!(out, "target = {}  ({})", s.target.value, origin(&s.target.origin));
    let fail = format!("{:?}", s.fail_on.value).to_lowercase();
    let _ = writeln!(out, "fail-on = {fail}  ({})", origin(&s.fail_on.origin));
    let _ = writeln!(out, "migration = {}  ({})", s.migration.value.as_str(), origin(&s.migration.origin));
    let _ = writeln!(out, "entries = {}  ({})", s.entries.value.as_str(), origin(&s.entries.origin));
    let runs: Vec<String> = s.entry.value.iter().map(|r| r.command.clone()).collect();
    let _ = writeln!(out, "entry = {}  ({})", list(&runs), origin(&s.entry.origin));
    out
}

/// `per-file-ignores` from the configuration: glob -> codes; a glob without
/// `/` matches the file name, one with `/` the path relative to the
/// configuration file's directory (whatever directory the scan runs from).
pub struct PerFileIgnores {
    base: std::path::PathBuf,
    globs: Vec<(globset::GlobMatcher, bool, Vec<String>)>,
}

impl PerFileIgnores {
    /// Compiles the table; `config::check_codes` has rejected globs that do not compile.
    pub fn new(table: &PerFileTable) -> Self {
        let globs = table
            .globs
            .iter()
            .filter_map(|(g, codes)| Some((per_file_glob(g).ok()?, g.contains('/'), codes.clone())))
            .collect();
        PerFileIgnores { base: table.base.clone(), globs }
    }

    /// Whether the table silences `f`.
    pub fn ignores(&self, f: &Finding) -> bool {
        if self.globs.is_empty() {
            return false;
        }
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        // A file outside the configuration's directory only matches globs on its name.
        let relative = relative_to(&self.base, &f.path);
        self.globs.iter().any(|(g, full, codes)| {
            let subject = if *full { relative.as_deref() } else { Some(name) };
            subject.is_some_and(|s| g.is_match(s)) && codes.iter().any(|c| f.code.starts_with(c.as_str()))
        })
    }
}
