//! The lower bounds that a tree-sitter tree puts on any analysis.
//!
//! - `walk_floor LIST_FILE [ROUNDS]`: how long reading every node of every
//!   parsed file once, doing nothing with it, takes next to the parse itself
//!   (bench/floor.sh). One thread; each round parses every file, then parses
//!   and walks every file, and prints both times. Round 0 warms the page
//!   cache and is not printed.
//! - `walk_floor --parse LIST_FILE THREADS`: the parse floor of a scan
//!   (bench/run.sh): read and parse every file once on THREADS threads, one
//!   parser per thread, and drop the tree. The caller times the process, so
//!   the figure includes start-up and reading the files, as a scan's does.
//!
//! LIST_FILE names one Python file per line.

use rayon::prelude::*;
use std::time::Instant;

/// Visits every node (named or not) with one cursor, the cheapest traversal
/// tree-sitter offers; returns how many it saw.
fn visit_all(root: tree_sitter::Node) -> usize {
    let mut cursor = root.walk();
    let mut seen = 0;
    loop {
        seen += 1;
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return seen;
            }
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2);
}

fn python_parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    if let Err(e) = parser.set_language(&tree_sitter_python::LANGUAGE.into()) {
        fail(&format!("the Python grammar does not load: {e}"));
    }
    parser
}

fn read_list(list: &str) -> Vec<String> {
    let text = std::fs::read_to_string(list).unwrap_or_else(|e| fail(&format!("cannot read {list}: {e}")));
    text.lines().map(str::to_owned).collect()
}

/// Reads and parses every listed file on `threads` threads; returns how many
/// parsed. Unreadable or non-UTF-8 files are skipped, as a scan skips them.
fn parse_all(paths: &[String], threads: usize) -> usize {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start {threads} threads: {e}")));
    pool.install(|| {
        paths
            .par_iter()
            .map_init(python_parser, |parser, path| {
                let Ok(text) = std::fs::read_to_string(path) else { return 0 };
                usize::from(parser.parse(&text, None).is_some())
            })
            .sum()
    })
}

fn walk_rounds(paths: &[String], rounds: usize) {
    // Unreadable or non-UTF-8 files are left out of both variants alike.
    let texts: Vec<String> = paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let mut parser = python_parser();
    println!("files {}", texts.len());
    for round in 0..=rounds {
        let mut timings = Vec::new();
        for walk in [false, true] {
            let start = Instant::now();
            let mut nodes = 0;
            for text in &texts {
                let Some(tree) = parser.parse(text, None) else { continue };
                if walk {
                    nodes += visit_all(tree.root_node());
                }
            }
            timings.push((start.elapsed().as_secs_f64(), nodes));
        }
        if round > 0 {
            println!("parse {:.3} parse+walk {:.3} nodes {}", timings[0].0, timings[1].0, timings[1].1);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, list, threads] if flag == "--parse" => {
            let threads = threads.parse().unwrap_or_else(|_| fail("THREADS must be a number"));
            let parsed = parse_all(&read_list(list), threads);
            println!("parsed {parsed}");
        }
        [list] => walk_rounds(&read_list(list), 5),
        [list, rounds] => walk_rounds(&read_list(list), rounds.parse().unwrap_or(5)),
        _ => fail("usage: walk_floor LIST_FILE [ROUNDS] | walk_floor --parse LIST_FILE THREADS"),
    }
}
