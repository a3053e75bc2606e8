//! Command-line arguments.

pub use crate::config::{Entries, FailOn, Migration};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Static analysis for PyTorch code moving from CUDA GPUs to Huawei Ascend NPUs.
#[derive(Debug, Parser)]
#[command(name = "npu-mem", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan Python files, shell scripts and notebooks for NPU memory and migration problems.
    Scan(Box<ScanArgs>),
    /// List every rule with its section and severity.
    Rules(RulesArgs),
    /// Explain one rule.
    Rule(RuleArgs),
    /// Run the language server on stdin and stdout, for editors (see README: "In your editor").
    Server,
}

/// Output formats of `scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The sectioned report for people.
    Text,
    /// One line per finding.
    Concise,
    /// Machine-readable JSON (described in docs/report.md).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
    /// GitLab Code Quality report (the `codequality` artifact of a CI job).
    Gitlab,
    /// A Markdown report for a pull-request comment or the job summary.
    Markdown,
    /// One CSV row per finding, with the columns of Huawei's `unsupported_api.csv`.
    Csv,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When FORCE_COLOR is set (not to 0), or else when stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The lowest severity the text and concise reports show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MinSeverity {
    /// Every finding.
    Info,
    /// Warnings and errors.
    Warning,
    /// Errors only.
    Error,
}

impl From<MinSeverity> for crate::finding::Severity {
    fn from(m: MinSeverity) -> Self {
        match m {
            MinSeverity::Info => Self::Info,
            MinSeverity::Warning => Self::Warning,
            MinSeverity::Error => Self::Error,
        }
    }
}

/// `npu-mem scan`.
#[derive(Debug, clap::Args)]
// The flags that shape the report, for the modes that write none (--diff,
// --add-ignore, --write-baseline), so that they are refused, not ignored.
#[command(group(clap::ArgGroup::new("report_flags").multiple(true)
    .args(["format", "output", "output_sarif", "output_json", "output_markdown", "output_gitlab", "output_csv", "statistics"])))]
pub struct ScanArgs {
    /// Files or directories to scan; `-` is standard input (with --stdin-filename).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Read the file to scan from standard input and report it as this path (which need not
    /// exist): for editors and formatters that pipe a buffer. Give `-` as the path to scan.
    /// With --fix, the fixed text is printed on stdout in place of the report.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["add_ignore", "write_baseline"])]
    pub stdin_filename: Option<PathBuf>,
    /// Output format (given twice, the last wins: a pre-commit hook's `args` can
    /// replace the format its entry sets).
    #[arg(long, value_enum, default_value_t = Format::Text, overrides_with = "format")]
    pub format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Also write a SARIF report to this file.
    #[arg(long, value_name = "FILE")]
    pub output_sarif: Option<PathBuf>,
    /// Also write a JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub output_json: Option<PathBuf>,
    /// Also write a Markdown report to this file (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "FILE")]
    pub output_markdown: Option<PathBuf>,
    /// Also write a GitLab Code Quality report to this file (for `artifacts: reports: codequality:`).
    #[arg(long, value_name = "FILE")]
    pub output_gitlab: Option<PathBuf>,
    /// Also write a CSV report to this file (the columns of Huawei's `unsupported_api.csv`).
    #[arg(long, value_name = "FILE")]
    pub output_csv: Option<PathBuf>,
    /// Exit with 1 when a finding at or above this severity remains [default: warning].
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// The migration style to assume: `auto` (transfer_to_npu) makes what it handles advice,
    /// `manual` keeps every severity, `detect` decides per project by its imports [default: detect].
    #[arg(long, value_enum)]
    pub migration: Option<Migration>,
    /// Which entry scripts count as run: `launched` makes findings in scripts that no launch
    /// script (or document) of their project starts, in functions nothing calls and in branches
    /// no launch takes, advice; `all` keeps every severity [default: launched].
    #[arg(long, value_enum)]
    pub entries: Option<Entries>,
    /// A run to scan, as you start it: a script (`train.py`), a module (`-m pkg.train`) or a
    /// command line (`bash scripts/train_8p.sh`); repeatable. Code no named run reaches is advice.
    #[arg(long, value_name = "COMMAND", allow_hyphen_values = true)]
    pub entry: Vec<String>,
    /// The torch_npu version the advice is for [default: 2.1].
    #[arg(long, value_parser = ["2.1", "2.6", "2.14"])]
    pub target: Option<String>,
    /// Only these rule codes or prefixes (comma-separated; repeatable).
    #[arg(long, value_name = "CODES")]
    pub select: Vec<String>,
    /// Never these rule codes or prefixes (comma-separated; repeatable).
    #[arg(long, value_name = "CODES")]
    pub ignore: Vec<String>,
    /// Use this configuration file instead of looking for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the resolved settings and where each came from, then exit.
    #[arg(long)]
    pub show_settings: bool,
    /// Report findings recorded in this baseline as baselined: shown, not counted by the gate.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Record the current findings in this baseline file and exit with 0.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["baseline", "report_flags"])]
    pub write_baseline: Option<PathBuf>,
    /// Append `# npu-mem: ignore[...] -- REASON` to every line with findings, then exit.
    #[arg(long, value_name = "REASON", num_args = 0..=1, conflicts_with_all = ["write_baseline", "baseline", "report_flags"], default_missing_value = crate::add_ignore::DEFAULT_REASON)]
    pub add_ignore: Option<String>,
    /// Keep only findings on lines added or changed since this git revision (untracked files count as changed).
    #[arg(long, value_name = "REV")]
    pub diff_base: Option<String>,
    /// Apply every safe fix in place, then report what remains.
    #[arg(long, conflicts_with_all = ["add_ignore", "write_baseline", "diff_base"])]
    pub fix: bool,
    /// With --fix or --diff: apply unsafe fixes too (they may change behaviour; review the result).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print a unified diff of what --fix would change and write nothing (exit 1 if there is something to fix).
    #[arg(long, conflicts_with_all = ["add_ignore", "write_baseline", "diff_base", "baseline", "report_flags"])]
    pub diff: bool,
    /// With --fix: exit with 1 whenever a file was changed, even if no findings remain (for pre-commit).
    #[arg(long, requires = "fix")]
    pub exit_non_zero_on_fix: bool,
    /// Skip paths matching this glob, relative to the current directory (repeatable); named files are always scanned.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Add a rule pack: a TOML file or a directory of them (repeatable).
    #[arg(long = "rules", value_name = "PATH")]
    pub rule_packs: Vec<PathBuf>,
    /// Worker threads, 1 to 256 (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Do not read or write the result cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Keep the result cache here [default: .npu-mem-cache in the current directory].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// No progress bar and no status lines on stderr (warnings still appear).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Colour the text report.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Leave findings below this severity out of the text and concise reports
    /// (they still count, for the exit code too; other formats keep them).
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = MinSeverity::Info)]
    pub min_severity: MinSeverity,
    /// Print the number of findings per rule code, with how many are fixable, instead of the report.
    #[arg(long)]
    pub statistics: bool,
    /// In the text report, also say which named run (`--entry`) reaches each module that holds findings.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Try every rule on every file, and parse every file, instead of skipping
    /// those whose text holds no word a rule needs: the same report, slower
    /// (to check the skip).
    #[arg(long)]
    pub no_skip: bool,
    /// Benchmarking aid: read and parse every file, match nothing, report nothing.
    #[arg(long, hide = true)]
    pub parse_only: bool,
}

impl ScanArgs {
    /// The settings the command line gives, for [`crate::config::resolve`].
    pub fn command_line(&self) -> crate::config::CommandLine {
        crate::config::CommandLine {
            select: self.select.clone(),
            ignore: self.ignore.clone(),
            exclude: self.exclude.clone(),
            rule_packs: self.rule_packs.clone(),
            target: self.target.clone(),
            fail_on: self.fail_on,
            migration: self.migration,
            entries: self.entries,
            entry: self.entry.clone(),
        }
    }
}

/// Formats of `npu-mem rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    /// One line per rule.
    Text,
    /// Every rule with its documentation, for tools.
    Json,
    /// Every rule with its documentation as one Markdown page (docs/rules.md).
    Markdown,
}

/// `npu-mem rules`.
#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
    pub format: RulesFormat,
    /// Also load these packs.
    #[arg(long = "rules", value_name = "PATH")]
    pub rule_packs: Vec<PathBuf>,
}

/// `npu-mem rule CODE`.
#[derive(Debug, clap::Args)]
pub struct RuleArgs {
    /// The rule code, e.g. TX013.
    pub code: String,
    /// Also load these packs.
    #[arg(long = "rules", value_name = "PATH")]
    pub rule_packs: Vec<PathBuf>,
}
