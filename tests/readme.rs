//! The README and the pages under docs/: the README fits on a page and its
//! demo excerpt is what the demo scan prints; every relative link leads to a
//! file (and heading) that exists; every `npu-mem` command shown in a code
//! block is accepted by the command-line parser; the rule table of
//! docs/built-in-rules.md is the one `npu-mem rules` prints.

mod common;

use clap::Parser;
use npu_mem::cli::Cli;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The README's budget: what a reader takes in before following a link.
const README_MAX_LINES: usize = 300;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every page in docs/, as (path, text).
fn documents() -> Vec<(PathBuf, String)> {
    let root = Path::new(ROOT);
    let mut paths = vec![root.join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    paths.extend(pages);
    paths.into_iter().map(|p| (p.clone(), read(&p))).collect()
}

/// A fenced code block: its info string (language) and its lines.
struct Block {
    lang: String,
    lines: Vec<String>,
}

/// Splits a Markdown text into its fenced code blocks and the prose around
/// them (the prose with each block replaced by an empty line).
fn split_fences(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some(Block { lang: line.trim_start()[3..].trim().to_string(), lines: Vec::new() }),
            (Some(_), true) => {
                blocks.extend(open.take());
                prose.push('\n');
            }
            (Some(block), false) => block.lines.push(line.to_string()),
            (None, false) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    assert!(open.is_none(), "a code block is never closed");
    (blocks, prose)
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as
/// hyphens; a repeated heading gets `-1`, `-2`, ...
fn anchors(prose: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose.lines() {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *count == 0 { slug.clone() } else { format!("{slug}-{count}") });
        *count += 1;
    }
    out
}

/// The targets of the inline links in the prose, inline code left out.
fn link_targets(prose: &str) -> Vec<String> {
    let code = Regex::new(r"(?s)``.*?``|`[^`]*`").unwrap();
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let prose = code.replace_all(prose, "");
    link.captures_iter(&prose).map(|c| c[1].to_string()).collect()
}

#[test]
fn readme_fits_on_a_page() {
    let lines = read(&Path::new(ROOT).join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; move reference text to docs/ (at most {README_MAX_LINES})"
    );
}

/// The relative links of `docs` (path, text) that lead nowhere, and how
/// many relative links each document has.
fn broken_links(docs: &[(PathBuf, String)]) -> (Vec<String>, BTreeMap<PathBuf, usize>) {
    let headings: BTreeMap<PathBuf, BTreeSet<String>> =
        docs.iter().map(|(path, text)| (path.canonicalize().unwrap(), anchors(&split_fences(text).1))).collect();
    let mut broken = Vec::new();
    let mut counts = BTreeMap::new();
    for (path, text) in docs {
        let relative: Vec<String> = link_targets(&split_fences(text).1)
            .into_iter()
            .filter(|t| !t.contains("://") && !t.starts_with("mailto:"))
            .collect();
        counts.insert(path.clone(), relative.len());
        for target in relative {
            let (file, anchor) = target.split_once('#').map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
            let resolved = if file.is_empty() { path.clone() } else { path.parent().unwrap().join(file) };
            let Ok(resolved) = resolved.canonicalize() else {
                broken.push(format!("{}: {target}: no such file", path.display()));
                continue;
            };
            let Some(anchor) = anchor else { continue };
            match headings.get(&resolved) {
                Some(known) if known.contains(anchor) => {}
                Some(_) => broken.push(format!("{}: {target}: no heading with that anchor", path.display())),
                None => broken.push(format!("{}: {target}: an anchor into a page that is not checked", path.display())),
            }
        }
    }
    (broken, counts)
}

#[test]
fn relative_links_lead_to_files_and_headings_that_exist() {
    let (broken, counts) = broken_links(&documents());
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    let readme_links = counts[&Path::new(ROOT).join("README.md")];
    assert!(readme_links >= 10, "the README links to the docs pages; found only {readme_links} relative links");
}

#[test]
fn the_link_check_finds_missing_files_and_headings() {
    let dir = common::temp_dir("doc-links");
    let page = dir.join("a.md");
    let text = "# A page\n\n## What `--fix` guarantees\n\n[ok](#what---fix-guarantees) [ok](a.md#a-page) \
                [gone](b.md) [no heading](#what-fix-guarantees) `[code](b.md)`\n\n```sh\n[block](b.md)\n```\n";
    std::fs::write(&page, text).unwrap();
    let (broken, counts) = broken_links(&[(page.clone(), text.to_string())]);
    let shown = |target: &str, why: &str| format!("{}: {target}: {why}", page.display());
    assert_eq!(broken, [shown("b.md", "no such file"), shown("#what-fix-guarantees", "no heading with that anchor")]);
    assert_eq!(counts[&page], 4);
}

/// The words of a shell command line up to its end, a comment, a pipe, a
/// redirection or a second command; quotes are removed.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => break,
            (None, '|' | ';' | '&' | '>' | '<') => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The arguments of every `npu-mem` command (or `cargo run -- ...`) in the
/// code blocks of `text`, except `text` blocks, which show output.
fn commands(text: &str) -> Vec<Vec<String>> {
    let start =
        Regex::new(r"(?:^|[\s/])npu-mem ((?:scan|rules|rule|server)\b.*)|cargo run(?: --release)? -- (.*)").unwrap();
    let (blocks, _) = split_fences(text);
    let lines = blocks.iter().filter(|b| b.lang != "text").flat_map(|b| b.lines.iter());
    lines
        .filter_map(|line| start.captures(line))
        .map(|c| shell_words(c.get(1).or(c.get(2)).unwrap().as_str()))
        .collect()
}

#[test]
fn every_command_shown_is_accepted_by_the_parser() {
    let mut rejected = Vec::new();
    let mut counts = BTreeMap::new();
    for (path, text) in documents() {
        let found = commands(&text);
        for args in &found {
            let argv = std::iter::once("npu-mem".to_string()).chain(args.iter().cloned());
            if let Err(e) = Cli::try_parse_from(argv) {
                rejected.push(format!("{}: npu-mem {}\n{}", path.display(), args.join(" "), e.render()));
            }
        }
        counts.insert(path.file_name().unwrap().to_string_lossy().into_owned(), found.len());
    }
    assert!(rejected.is_empty(), "commands the parser refuses:\n{}", rejected.join("\n"));
    for (page, at_least) in [("README.md", 5), ("usage.md", 5), ("ci.md", 3)] {
        assert!(counts[page] >= at_least, "{page}: only {} npu-mem commands found in code blocks", counts[page]);
    }
}

#[test]
fn the_parser_check_refuses_a_wrong_command() {
    let text = "```sh\nnpu-mem scan --fial-on error .   # a typo\nnpu-mem scan --format xml\n```\n";
    let found = commands(text);
    assert_eq!(found, [vec!["scan", "--fial-on", "error", "."], vec!["scan", "--format", "xml"]]);
    for args in found {
        let argv = std::iter::once("npu-mem".to_string()).chain(args);
        assert!(Cli::try_parse_from(argv).is_err());
    }
}

#[test]
fn readme_demo_excerpt_is_what_the_first_step_prints() {
    let readme = read(&Path::new(ROOT).join("README.md"));
    let first_step = commands(&readme).into_iter().find(|args| args.first().is_some_and(|a| a == "scan"));
    let args = first_step.expect("the README's first step is a scan");
    assert_eq!(args, ["scan", "fixtures/demo"], "the first npu-mem command in the README scans the demo");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::npu_mem(&args);
    assert_eq!(run.code, 1, "the README says the demo scan exits with 1: {}", run.stderr);
    let report: Vec<String> = run.stdout.lines().map(common::without_timing).collect();

    let marker = readme.find("<!-- demo-report").expect("the README marks its demo excerpt");
    let (blocks, _) = split_fences(&readme[marker..]);
    let excerpt = &blocks.first().expect("a code block after the marker").lines;
    // Runs of lines between `...` lines: the first opens the report, each
    // later one follows the one before, line for line.
    let mut at = 0;
    for (i, run) in excerpt.split(|l| l == "...").enumerate() {
        let run: Vec<String> = run.iter().map(|l| common::without_timing(l)).collect();
        assert!(!run.is_empty(), "`...` lines stand between lines of the report");
        let found = if i == 0 {
            report.starts_with(&run).then_some(0)
        } else {
            (at..report.len()).find(|&start| report[start..].starts_with(&run))
        };
        let start =
            found.unwrap_or_else(|| panic!("the demo report has no lines\n{}\nafter line {at}", run.join("\n")));
        at = start + run.len();
    }
}

#[test]
fn rule_table_is_up_to_date() {
    let page = read(&Path::new(ROOT).join("docs/built-in-rules.md"));
    let start = page.find("<!-- rules:start").expect("rules table start marker");
    let end = page.find("<!-- rules:end -->").expect("rules table end marker");
    let documented: Vec<String> = page[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| code"))
        .map(str::to_string)
        .collect();
    let listing = common::npu_mem(&["rules"]).stdout;
    let generated: Vec<String> = listing
        .lines()
        .map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            let blocker = if l.contains("[blocker]") { ", blocker" } else { "" };
            format!("| {} | {} | {} | {}{} |", parts[0], parts[3], parts[1], parts[2], blocker)
        })
        .collect();
    assert_eq!(documented, generated, "regenerate the rule table of docs/built-in-rules.md from `npu-mem rules`");
}
