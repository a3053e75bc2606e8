//! The `npu-mem` command: walk -> parse -> analyse -> match -> report.

use clap::Parser;
use npu_mem::cache::Cache;
use npu_mem::cli::{Cli, ColorChoice, Command, FailOn, Format, RulesFormat, ScanArgs};
use npu_mem::error::RunError;
use npu_mem::finding::Severity;
use npu_mem::output::{self, ReportFile};
use npu_mem::report::{self, style::Paint, Report};
use npu_mem::rules::{compile::parse_version, engine::Engine, packs};
use npu_mem::{add_ignore, baseline, config, diff, fix, named_runs, scan, walk, Rereads};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Exit code for findings at or above `--fail-on`.
const EXIT_FINDINGS: u8 = 1;
/// Exit code for usage errors, missing paths and invalid rule packs.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    keep_large_buffers_out_of_the_heap();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let result = match cli.command {
        Command::Scan(args) => run_scan(*args),
        Command::Rules(args) => packs::load(&args.rule_packs).map_err(RunError::from).and_then(|set| {
            print_or_fail(&match args.format {
                RulesFormat::Text => npu_mem::report::rules::list(&set),
                RulesFormat::Json => npu_mem::report::rules::list_json(&set),
                RulesFormat::Markdown => npu_mem::report::rules::list_markdown(&set),
            })
        }),
        Command::Rule(args) => packs::load(&args.rule_packs)
            .map_err(RunError::from)
            .and_then(|set| Ok(npu_mem::report::rules::explain(&set, &args.code)?))
            .and_then(|text| print_or_fail(&text)),
        Command::Server => npu_mem::server::run().map_err(RunError::from),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            output::status(&format!("error: {error}"));
            EXIT_USAGE
        }
    };
    // A warning that could not be written is a failure too.
    ExitCode::from(if output::stderr_failed() { EXIT_USAGE } else { code })
}

/// Every file's text and syntax tree are large buffers that come and go.
/// glibc's malloc raises its mmap threshold each time such a buffer is freed,
/// after which they are carved from the heap, between the small findings kept
/// for the report, and the heap cannot shrink: peak RSS on the corpus copied
/// 4 times was 63 MiB with the moving threshold, 57 MiB with a fixed one.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_large_buffers_out_of_the_heap() {
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    /// glibc's `M_MMAP_THRESHOLD` (malloc.h).
    const M_MMAP_THRESHOLD: i32 = -3;
    // SAFETY: mallopt only tunes glibc's allocator, and runs before any other thread starts.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Other platforms keep their allocator's defaults.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_large_buffers_out_of_the_heap() {}

/// Prints clap's help, version or usage error; exit 2 if that cannot be written.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let printed = e.print();
    match printed {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_USAGE),
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE)),
    }
}

/// Prints `text` on stdout: exit 0, or the error that makes it exit 2 (a closed pipe is not one).
fn print_or_fail(text: &str) -> Result<u8, RunError> {
    match output::print(text) {
        Ok(()) | Err(output::StdoutError::ClosedPipe) => Ok(0),
        Err(output::StdoutError::Failed(e)) => Err(RunError::Stdout(e)),
    }
}

/// `npu-mem scan`, stage by stage: settings, inputs and outputs, walk,
/// analysis, fixes, report.
fn run_scan(args: ScanArgs) -> Result<u8, RunError> {
    let started = std::time::Instant::now();
    let buffer = npu_mem::stdin::buffer(args.stdin_filename.as_deref(), &args.paths)?;
    let roots = buffer.as_ref().map_or_else(|| args.paths.clone(), |b| vec![b.path.clone()]);
    let file = config_file(&args, &roots)?;
    let settings = config::resolve(&args.command_line(), file.as_ref());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads.map_or(0, usize::from)).build()?;
    // Never freed: the rules live until the process ends, and freeing their
    // many small allocations would cost a one-file scan about 2 ms.
    let set = std::mem::ManuallyDrop::new(pool.install(|| packs::load(&settings.rules.value))?);
    let known = |code: &str| set.rules.iter().any(|r| r.code.starts_with(code));
    config::check_codes(&settings, file.as_ref(), &known)?;
    if args.show_settings {
        return print_or_fail(&config::show(&settings, file.as_ref()));
    }
    let fix_mode = check_flags(&args)?;
    let target = parse_version(&settings.target.value)?;
    // Every input read and every output opened before the first file is written.
    let recorded = args.baseline.as_deref().map(baseline::read).transpose()?;
    let report_files = ReportFiles::open(&args)?;
    let mut engine = Engine::new(&set, target, &|code: &str| settings.enables(code));

    let texts = buffer.iter().map(|b| (config::absolute(&b.path), b.text.clone())).collect();
    let walked = walk::walk_with_texts(&roots, &settings.exclude.value, &set.compiler.file_extensions, &texts)?;
    let named = named_runs(&settings.entry, &walked, &roots, buffer.is_some())?;
    engine.skip_for(walked.files.len());
    if args.no_skip {
        engine.skip_nothing();
    }
    if args.parse_only {
        let parsed = pool.install(|| npu_mem::parse_only(&walked.files));
        let ms = started.elapsed().as_millis();
        output::status(&format!("parsed {parsed} of {} files in {ms} ms", walked.files.len()));
        return Ok(0);
    }

    let cache_dir = args.cache_dir.clone().unwrap_or_else(|| std::path::PathBuf::from(".npu-mem-cache"));
    let cache = match (!args.no_cache).then(|| Cache::open(&cache_dir, &engine, &settings.target.value, &roots)) {
        Some(Ok(cache)) => Some(cache),
        // A cache that cannot be used costs time, never the scan.
        Some(Err(e)) => {
            output::warn(&e.to_string());
            None
        }
        None => None,
    };
    let (mut outcomes, first_analyses) = analyse(&args, &walked, &engine, &pool, cache.as_ref());
    // Said once the scan has taken its entries: some are only found unreadable then.
    if let Some(note) = cache.as_ref().and_then(Cache::note) {
        output::warn(&note);
    }

    let ignores = config::PerFileIgnores::new(&settings.per_file_ignores.value);
    let fix_run = fix_mode.map(|mode| {
        let facts = npu_mem::ScanFacts::of(&walked, &outcomes, &engine, &Rereads::default());
        // With runs named, only the files they reach are edited.
        let reached = named.as_ref().map(|started| pool.install(|| named_runs::reached_files(started, &walked)));
        // Standard input is fixed in memory: the fixed text is printed.
        let write = !args.diff && buffer.is_none();
        let request = fix::FixRequest { mode, ignores: &ignores, write, files: reached.as_deref() };
        pool.install(|| fix::fix_files(&walked.files, &mut outcomes, &facts, &engine, &request))
    });
    // Saved, the cache is dropped: what it decoded is not held through the merge and the report.
    if let Some(cache) = cache {
        if let Err(e) = cache.save(scan::cache_entries(&walked.files, &outcomes, first_analyses)) {
            output::warn(&e.to_string());
        }
    }
    if args.diff {
        return print_diff(fix_run.unwrap_or_default(), args.quiet);
    }
    if let (Some(buffer), Some(run)) = (&buffer, fix_run.as_ref().filter(|_| args.fix)) {
        return print_fixed(buffer, run, &args);
    }

    let written: Vec<String> = match (&fix_run, args.fix) {
        (Some(run), true) => run.files.iter().map(|f| f.display.clone()).collect(),
        _ => Vec::new(),
    };
    let runs =
        scan::RunSettings { migration: &settings.migration, entries: settings.entries.value, named: named.as_ref() };
    // Read again after the fixes: nothing is remembered from the texts before them.
    let mut outcome = pool.install(|| scan::merge(outcomes, &engine, &walked, runs, &Rereads::default()));
    if let Some(run) = fix_run {
        record_fixes(&mut outcome, run, &args, written.len());
    }
    let finished =
        Finished { args: &args, settings: &settings, engine: &engine, ignores: &ignores, started, walked: &walked };
    let files_fixed = !written.is_empty();
    finished.report(outcome, recorded, report_files, files_fixed).map_err(|error| match files_fixed {
        false => error,
        true => RunError::AfterFix { error: Box::new(error), written },
    })
}

/// What the runs named with `--entry` or `entry` start. Reach follows
/// imports among the scanned files only, so it needs whole directories: a
/// scan of single files (a pre-commit hook, an editor's buffer) keeps every
/// finding as it is, and the configuration's runs are left out then, as they
/// are when the scan does not hold the files they name (a warning says so;
/// `--entry` makes both an error).
fn named_runs(
    runs: &config::Setting<Vec<config::NamedRun>>,
    walked: &walk::WalkResult,
    roots: &[std::path::PathBuf],
    buffer: bool,
) -> Result<Option<named_runs::Started>, RunError> {
    use named_runs::EntryProblem;
    let from_file = runs.origin != config::Origin::CommandLine;
    if runs.value.is_empty() || buffer && from_file {
        return Ok(None);
    }
    if let Some(file) = roots.iter().find(|r| !r.is_dir()) {
        if !from_file {
            return Err(RunError::EntryWithFiles(file.clone()));
        }
        output::warn(&format!(
            "`entry` in the configuration is left out: {} is a file, and the named runs need the scan of whole directories",
            file.display()
        ));
        return Ok(None);
    }
    match named_runs::start(&runs.value, walked) {
        Err(e) if from_file && matches!(e.problem, EntryProblem::NotScanned(_)) => {
            output::warn(&format!("{e}; scanned without the named runs"));
            Ok(None)
        }
        started => Ok(started?),
    }
}

/// The configuration file: the one `--config` names, or the nearest one above the first of `roots`.
fn config_file(args: &ScanArgs, roots: &[std::path::PathBuf]) -> Result<Option<config::Loaded>, config::ConfigError> {
    match &args.config {
        Some(path) => Ok(Some(config::read(path)?.ok_or_else(|| config::ConfigError::NoTable { path: path.clone() })?)),
        None => config::discover(roots.first().map_or(std::path::Path::new("."), |p| p.as_path())),
    }
}

/// Rejects flags that do not go together; the fix mode `--fix`/`--diff` ask for.
fn check_flags(args: &ScanArgs) -> Result<Option<fix::FixMode>, RunError> {
    if args.statistics && !matches!(args.format, Format::Text | Format::Concise) {
        return Err(RunError::StatisticsFormat);
    }
    let outputs = [&args.output, &args.output_sarif, &args.output_json, &args.output_markdown, &args.output_gitlab];
    let report_flags = args.format != Format::Text || outputs.iter().any(|o| o.is_some());
    if args.stdin_filename.is_some() && args.fix && report_flags {
        return Err(RunError::StdinFixReport);
    }
    match (args.fix || args.diff, args.unsafe_fixes) {
        (false, true) => Err(RunError::UnsafeFixesAlone),
        (false, false) => Ok(None),
        (true, unsafe_fixes) => Ok(Some(if unsafe_fixes { fix::FixMode::Unsafe } else { fix::FixMode::Safe })),
    }
}

/// Analyses every walked file in the pool, with a progress bar where one is
/// wanted, then again the files that import classes other files derive (see
/// [`scan::follow_imported_classes`]); also gives the first analyses of
/// those, which are what the cache stores for them.
fn analyse(
    args: &ScanArgs,
    walked: &walk::WalkResult,
    engine: &Engine,
    pool: &rayon::ThreadPool,
    cache: Option<&Cache>,
) -> (Vec<npu_mem::KeptOutcome>, BTreeMap<String, npu_mem::cache::StoredOutcome<'static>>) {
    let progress = npu_mem::progress::Progress::default();
    let run = || pool.install(|| scan::analyse_files(&walked.files, engine, &progress, cache));
    let machine_stdout =
        matches!(args.format, Format::Json | Format::Sarif | Format::Github | Format::Gitlab | Format::Csv)
            && args.output.is_none();
    let mut outcomes = if npu_mem::progress::wanted(args.quiet, machine_stdout, std::io::stderr().is_terminal()) {
        progress.show_while(walked.files.len(), run)
    } else {
        run()
    };
    let first = pool.install(|| scan::follow_imported_classes(walked, &mut outcomes, engine));
    (outcomes, first)
}

/// Adds what `--fix` changed to the outcome, and says so where the report will not.
fn record_fixes(outcome: &mut npu_mem::outcome::ScanOutcome, run: fix::FixRun, args: &ScanArgs, files_written: usize) {
    outcome.fixed_follow_ups = run.files.iter().flat_map(|f| f.follow_ups.iter().cloned()).collect();
    outcome.fixed = run.files.into_iter().flat_map(|f| f.findings).collect();
    outcome.fixed.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    outcome.problems.extend(run.problems);
    if args.format != Format::Text && !args.quiet {
        // The text report says it in its footer; other formats leave stdout to machines.
        let counts = report::describe_fixed(outcome.fixed.len(), &outcome.fixed_follow_ups);
        output::status(&format!("fixed {counts} in {}", plural(files_written, "file")));
    }
}

/// The files `-o` and `--output-*` name, opened before anything is written.
struct ReportFiles {
    report: Option<ReportFile>,
    sarif: Option<ReportFile>,
    json: Option<ReportFile>,
    markdown: Option<ReportFile>,
    gitlab: Option<ReportFile>,
    csv: Option<ReportFile>,
}

impl ReportFiles {
    fn open(args: &ScanArgs) -> Result<Self, output::ReportFileError> {
        let open = |path: &Option<std::path::PathBuf>| path.as_deref().map(ReportFile::open).transpose();
        Ok(ReportFiles {
            report: open(&args.output)?,
            sarif: open(&args.output_sarif)?,
            json: open(&args.output_json)?,
            markdown: open(&args.output_markdown)?,
            gitlab: open(&args.output_gitlab)?,
            csv: open(&args.output_csv)?,
        })
    }
}

/// What the last stage needs of the run: after analysis and fixing, the
/// findings are filtered, recorded or reported.
struct Finished<'a> {
    args: &'a ScanArgs,
    settings: &'a config::Settings,
    engine: &'a Engine<'a>,
    ignores: &'a config::PerFileIgnores,
    started: std::time::Instant,
    walked: &'a walk::WalkResult,
}

impl Finished<'_> {
    /// Applies the settings, `--diff-base` and the baseline, then adds
    /// suppressions, writes the baseline or renders the report; the exit code.
    fn report(
        &self,
        mut outcome: npu_mem::outcome::ScanOutcome,
        recorded: Option<baseline::Baseline>,
        files: ReportFiles,
        files_fixed: bool,
    ) -> Result<u8, RunError> {
        let (args, settings) = (self.args, self.settings);
        scan::apply_settings(&mut outcome, self.ignores, &settings.severity.value);
        if let Some(rev) = &args.diff_base {
            let first = args.stdin_filename.as_ref().or(args.paths.first());
            let start = first.map_or(std::path::Path::new("."), |p| p.as_path());
            let changed = diff::ChangedLines::since(rev, start)?;
            outcome.findings.retain(|f| changed.touches(f));
            for why in changed.undecided() {
                output::warn(&format!("--diff-base cannot judge {why}; all its findings are kept"));
            }
        }
        if let Some(reason) = &args.add_ignore {
            let added = add_ignore::add_ignores(&outcome.findings, reason);
            for s in &added.skipped {
                output::warn(s);
            }
            output::status(&format!(
                "added or extended {} suppression comments in {} files",
                added.comments, added.files
            ));
            return Ok(if added.skipped.is_empty() { 0 } else { EXIT_FINDINGS });
        }
        if let Some(path) = &args.write_baseline {
            baseline::write(path, &outcome.findings)?;
            output::status(&format!("wrote {} findings to the baseline {}", outcome.findings.len(), path.display()));
            return Ok(0);
        }
        if let Some(recorded) = recorded {
            let (new, old, stale) = baseline::split(std::mem::take(&mut outcome.findings), &recorded);
            outcome.findings = new;
            outcome.baselined = old;
            outcome.stale_baseline = stale;
        }
        for p in &outcome.problems {
            output::warn(&format!("{}: {}", p.path, p.message));
        }
        for (path, message) in &self.walked.problems {
            output::warn(&format!("{path}: {message}"));
        }
        let report = Report {
            outcome: &outcome,
            engine: self.engine,
            target: &settings.target.value,
            elapsed_ms: self.started.elapsed().as_millis(),
            walk_problems: &self.walked.problems,
            min_severity: args.min_severity.into(),
            verbose: args.verbose,
        };
        let streamed = [(files.sarif, report::sarif::write as report::WriteReport), (files.json, report::json::write)];
        for (file, write) in streamed {
            if let Some(file) = file {
                file.replace_with(&|out| write(&report, out))?;
            }
        }
        let whole = [
            (files.markdown, report::markdown::render as fn(&Report) -> String),
            (files.gitlab, report::gitlab::render),
            (files.csv, report::csv::render),
        ];
        for (file, render) in whole {
            if let Some(file) = file {
                file.replace(&render(&report))?;
            }
        }
        let to_stdout = files.report.is_none();
        let write = |out: &mut dyn std::io::Write| self.write(&report, to_stdout, out);
        match files.report {
            Some(file) => file.replace_with(&write)?,
            None => match output::print_with(&write) {
                // The findings are what they are, whether or not `| head` read them all.
                Ok(()) | Err(output::StdoutError::ClosedPipe) => {}
                Err(output::StdoutError::Failed(e)) => return Err(RunError::Stdout(e)),
            },
        }
        let threshold = match settings.fail_on.value {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        };
        let failing = threshold.is_some_and(|t| outcome.findings.iter().any(|f| f.severity >= t));
        let changed = args.exit_non_zero_on_fix && files_fixed;
        Ok(if failing || changed { EXIT_FINDINGS } else { 0 })
    }

    /// Writes the report in the chosen format to `out`; `to_stdout` when it
    /// goes to stdout. JSON and SARIF stream; the other formats are small and
    /// rendered whole first.
    fn write(&self, report: &Report, to_stdout: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let text = if self.args.statistics {
            report::statistics::render(report)
        } else {
            match self.args.format {
                Format::Json => return report::json::write(report, out),
                Format::Sarif => return report::sarif::write(report, out),
                Format::Text => {
                    let color = match self.args.color {
                        ColorChoice::Always => true,
                        ColorChoice::Never => false,
                        ColorChoice::Auto => auto_color(to_stdout),
                    };
                    report::text::render(report, Paint(color))
                }
                Format::Concise => report::concise::render(report),
                Format::Github => report::github::render(report),
                Format::Gitlab => report::gitlab::render(report),
                Format::Markdown => report::markdown::render(report),
                Format::Csv => report::csv::render(report),
            }
        };
        out.write_all(text.as_bytes())
    }
}

/// `--color auto` for a report on stdout (a file named by `-o` is never
/// coloured): FORCE_COLOR (set, and not to `0` or `false`) turns colour on and
/// FORCE_COLOR=0 off, as CI logs want; otherwise colour when stdout is a
/// terminal and NO_COLOR is unset or empty.
fn auto_color(to_stdout: bool) -> bool {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match set("FORCE_COLOR").as_deref() {
        Some("0" | "false") => false,
        Some(_) => to_stdout,
        None => to_stdout && std::io::stdout().is_terminal() && set("NO_COLOR").is_none(),
    }
}

/// `--diff`: the unified diff of every file `--fix` would change on stdout, a
/// summary and the files it would leave alone on stderr; 1 if anything would change.
fn print_diff(run: fix::FixRun, quiet: bool) -> Result<u8, RunError> {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let diffs: String =
        run.files.iter().map(|f| fix::unified(&f.display, &text(&f.original), &text(&f.fixed))).collect();
    print_or_fail(&diffs)?;
    for p in &run.problems {
        output::warn(&format!("{}: {}", p.path, p.message));
    }
    let findings: usize = run.files.iter().map(|f| f.findings.len()).sum();
    let follow_ups: Vec<String> = run.files.iter().flat_map(|f| f.follow_ups.iter().cloned()).collect();
    if !quiet {
        let counts = report::describe_fixed(findings, &follow_ups);
        output::status(&format!("--fix would fix {counts} in {}", plural(run.files.len(), "file")));
    }
    Ok(if run.files.is_empty() { 0 } else { EXIT_FINDINGS })
}

/// `--fix` of standard input: the text, fixed (or as it was), on stdout, and
/// what was fixed on stderr; 1 with `--exit-non-zero-on-fix` if it changed.
fn print_fixed(buffer: &npu_mem::stdin::Buffer, run: &fix::FixRun, args: &ScanArgs) -> Result<u8, RunError> {
    for p in &run.problems {
        output::warn(&format!("{}: {}", p.path, p.message));
    }
    let fixed = run.files.first();
    let text = fixed.map_or_else(|| buffer.text.to_string(), |f| String::from_utf8_lossy(&f.fixed).into_owned());
    print_or_fail(&text)?;
    if !args.quiet {
        let follow_ups = fixed.map_or(&[][..], |f| &f.follow_ups);
        let counts = report::describe_fixed(fixed.map_or(0, |f| f.findings.len()), follow_ups);
        output::status(&format!("fixed {counts} in standard input"));
    }
    Ok(if args.exit_non_zero_on_fix && fixed.is_some() { EXIT_FINDINGS } else { 0 })
}

/// `1 finding`, `2 findings`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
