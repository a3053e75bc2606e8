//! The lower bound that a tree-sitter tree puts on any analysis: how long
//! reading every node of every parsed file once, doing nothing with it, takes
//! next to the parse itself. bench/floor.sh runs it on the corpus.
//!
//! Usage: `walk_floor LIST_FILE [ROUNDS]`, where LIST_FILE names one Python
//! file per line. One thread; each round parses every file, then parses and
//! walks every file, and prints both times. Round 0 warms the page cache and
//! is not printed.

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

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(list) = args.next() else {
        eprintln!("usage: walk_floor LIST_FILE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let list = std::fs::read_to_string(&list).unwrap_or_else(|e| {
        eprintln!("cannot read {list}: {e}");
        std::process::exit(2);
    });
    // Unreadable or non-UTF-8 files are left out of both variants alike.
    let texts: Vec<String> = list.lines().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let mut parser = tree_sitter::Parser::new();
    if let Err(e) = parser.set_language(&tree_sitter_python::LANGUAGE.into()) {
        eprintln!("the Python grammar does not load: {e}");
        std::process::exit(2);
    }
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
