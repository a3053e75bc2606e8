//! The `npu-mem` command: walk -> parse -> analyse -> match -> report.

use clap::Parser;
use npu_mem::cache::Cache;
use npu_mem::cli::{Cli, ColorChoice, Command, FailOn, Format, RulesFormat, ScanArgs};
use npu_mem::finding::Severity;
use npu_mem::report::{self, text::Paint, Report};
use npu_mem::rules::{compile::parse_version, engine::Engine, packs};
use npu_mem::{add_ignore, baseline, config, diff, fix, scan, unified_diff, walk};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// Exit code for findings at or above `--fail-on`.
const EXIT_FINDINGS: u8 = 1;
/// Exit code for usage errors, missing paths and invalid rule packs.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(args) => run_scan(*args),
        Command::Rules(args) => packs::load(&args.rule_packs).map_err(|e| e.to_string()).map(|set| {
            match args.format {
                RulesFormat::Text => print!("{}", npu_mem::report::rules::list(&set)),
                RulesFormat::Json => print!("{}", npu_mem::report::rules::list_json(&set)),
            }
            0
        }),
        Command::Rule(args) => packs::load(&args.rule_packs).map_err(|e| e.to_string()).and_then(|set| {
            npu_mem::report::rules::explain(&set, &args.code).map(|text| {
                print!("{text}");
                0
            })
        }),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("npu-mem: error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run_scan(args: ScanArgs) -> Result<u8, String> {
    let started = std::time::Instant::now();
    let file = match &args.config {
        Some(path) => {
            Some(config::read(path)?.ok_or_else(|| format!("{}: has no [tool.npu-mem] table", path.display()))?)
        }
        None => config::discover(args.paths.first().map_or(std::path::Path::new("."), |p| p.as_path()))?,
    };
    let settings = config::resolve(&args, file.as_ref());
    let set = packs::load(&settings.rules.value).map_err(|e| format!("invalid rule pack: {e}"))?;
    let known = |code: &str| set.rules.iter().any(|r| r.code.starts_with(code));
    config::check_codes(&settings, file.as_ref(), &known)?;
    if args.show_settings {
        print!("{}", config::show(&settings, file.as_ref()));
        return Ok(0);
    }
    let target = parse_version(&settings.target.value)?;
    let (select, ignore) = (&settings.select.value, &settings.ignore.value);
    let enabled = |code: &str| {
        (select.is_empty() || select.iter().any(|s| code.starts_with(s.as_str())))
            && !ignore.iter().any(|s| code.starts_with(s.as_str()))
    };
    let engine = Engine::new(&set, target, &enabled);
    let threads = args.threads.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let walked = walk::walk(&args.paths, &settings.exclude.value, &set.compiler.file_extensions).map_err(|e| e.0)?;
    if args.parse_only {
        let parsed = pool.install(|| scan::parse_only(&walked.files));
        eprintln!("parsed {parsed} of {} files in {} ms", walked.files.len(), started.elapsed().as_millis());
        return Ok(0);
    }
    let cache_dir = args.cache_dir.clone().unwrap_or_else(|| std::path::PathBuf::from(".npu-mem-cache"));
    let cache = (!args.no_cache).then(|| Cache::open(&cache_dir, &engine, &settings.target.value));
    if let Some(note) = cache.as_ref().and_then(|c| c.note.as_ref()) {
        eprintln!("npu-mem: warning: {note}");
    }
    let progress = npu_mem::progress::Progress::default();
    let analyse = || pool.install(|| scan::analyse_files(&walked.files, &engine, &progress, cache.as_ref()));
    let machine_stdout = matches!(args.format, Format::Json | Format::Sarif | Format::Github) && args.output.is_none();
    let mut outcomes = if !args.quiet && !machine_stdout && std::io::stderr().is_terminal() {
        // NPU_MEM_PROGRESS_DELAY_MS shortens the delay before the bar, for the test that checks it.
        let delay = std::env::var("NPU_MEM_PROGRESS_DELAY_MS").ok().and_then(|v| v.parse().ok());
        progress.show_while(walked.files.len(), delay.map(std::time::Duration::from_millis), analyse)
    } else {
        analyse()
    };
    let ignores = scan::PerFileIgnores::new(&settings.per_file_ignores.value);
    let fix_mode = match (args.fix || args.diff, args.unsafe_fixes) {
        (false, true) => {
            return Err("--unsafe-fixes chooses which fixes --fix and --diff apply; add one of them".into())
        }
        (false, false) => None,
        (true, unsafe_fixes) => Some(if unsafe_fixes { fix::FixMode::Unsafe } else { fix::FixMode::Safe }),
    };
    let fix_run = fix_mode.map(|mode| {
        let facts = scan::project_facts(&outcomes, &engine);
        let write = !args.diff;
        pool.install(|| fix::fix_files(&walked.files, &mut outcomes, &facts, &engine, mode, &ignores, write))
    });
    if let Some(cache) = &cache {
        if let Err(e) = cache.save(scan::cache_entries(&outcomes)) {
            eprintln!("npu-mem: warning: {e}; run with --no-cache or --cache-dir DIR");
        }
    }
    if args.diff {
        return Ok(print_diff(fix_run.unwrap_or_default(), args.quiet));
    }
    let mut outcome = scan::merge(outcomes, &engine);
    let files_fixed = fix_run.as_ref().map_or(0, |run| run.files.len());
    if let Some(run) = fix_run {
        outcome.fixed = run.files.into_iter().flat_map(|f| f.findings).collect();
        outcome.fixed.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        outcome.problems.extend(run.problems);
        if args.format != Format::Text && !args.quiet {
            // The text report says it in its footer; other formats leave stdout to machines.
            eprintln!("npu-mem: fixed {} in {}", plural(outcome.fixed.len(), "finding"), plural(files_fixed, "file"));
        }
    }
    scan::apply_settings(&mut outcome, &ignores, &settings.severity.value);
    if let Some(rev) = &args.diff_base {
        let start = args.paths.first().map_or(std::path::Path::new("."), |p| p.as_path());
        let changed = diff::ChangedLines::since(rev, start)?;
        outcome.findings.retain(|f| changed.touches(f));
    }
    if let Some(reason) = &args.add_ignore {
        let added = add_ignore::add_ignores(&outcome.findings, reason);
        for s in &added.skipped {
            eprintln!("npu-mem: warning: {s}");
        }
        eprintln!("npu-mem: added or extended {} suppression comments in {} files", added.comments, added.files);
        return Ok(if added.skipped.is_empty() { 0 } else { EXIT_FINDINGS });
    }
    if let Some(path) = &args.write_baseline {
        baseline::write(path, &outcome.findings)?;
        eprintln!("npu-mem: wrote {} findings to the baseline {}", outcome.findings.len(), path.display());
        return Ok(0);
    }
    if let Some(path) = &args.baseline {
        let recorded = baseline::read(path)?;
        let (new, old, stale) = baseline::split(std::mem::take(&mut outcome.findings), &recorded);
        outcome.findings = new;
        outcome.baselined = old;
        outcome.stale_baseline = stale;
    }
    for p in &outcome.problems {
        eprintln!("npu-mem: warning: {}: {}", p.path, p.message);
    }
    for (path, message) in &walked.problems {
        eprintln!("npu-mem: warning: {path}: {message}");
    }
    let report = Report {
        outcome: &outcome,
        engine: &engine,
        target: &settings.target.value,
        elapsed_ms: started.elapsed().as_millis(),
        walk_problems: &walked.problems,
    };
    let rendered = match args.format {
        Format::Text => {
            let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
            let color = match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => to_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            };
            report::text::render(&report, Paint(color))
        }
        Format::Concise => report::concise::render(&report),
        Format::Json => report::json::render(&report),
        Format::Sarif => report::sarif::render(&report),
        Format::Github => report::github::render(&report),
        Format::Markdown => report::markdown::render(&report),
    };
    let extra_outputs = [
        (&args.output_sarif, report::sarif::render as fn(&Report) -> String),
        (&args.output_json, report::json::render),
        (&args.output_markdown, report::markdown::render),
    ];
    for (path, render) in extra_outputs {
        if let Some(path) = path {
            std::fs::write(path, render(&report)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    match &args.output {
        Some(path) => std::fs::write(path, rendered).map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(rendered.as_bytes());
        }
    }
    let threshold = match settings.fail_on.value {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    let failing = threshold.is_some_and(|t| outcome.findings.iter().any(|f| f.severity >= t));
    let changed = args.exit_non_zero_on_fix && files_fixed > 0;
    Ok(if failing || changed { EXIT_FINDINGS } else { 0 })
}

/// `--diff`: the unified diff of every file `--fix` would change on stdout, a
/// summary and the files it would leave alone on stderr; 1 if anything would change.
fn print_diff(run: fix::FixRun, quiet: bool) -> u8 {
    let mut stdout = std::io::stdout().lock();
    for f in &run.files {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let _ = stdout.write_all(unified_diff::unified(&f.display, &text(&f.original), &text(&f.fixed)).as_bytes());
    }
    for p in &run.problems {
        eprintln!("npu-mem: warning: {}: {}", p.path, p.message);
    }
    let findings: usize = run.files.iter().map(|f| f.findings.len()).sum();
    if !quiet {
        eprintln!("npu-mem: --fix would fix {} in {}", plural(findings, "finding"), plural(run.files.len(), "file"));
    }
    if run.files.is_empty() {
        0
    } else {
        EXIT_FINDINGS
    }
}

/// `1 finding`, `2 findings`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
