//! A mutation fuzzer for the whole `npu-mem scan` pipeline, run as a separate
//! process so that panics, aborts (a stack overflow) and hangs are all caught.
//!
//! Each round mutates seed files (the fixtures, the rule packs, and any
//! `--seeds` directory) into a batch of `.py`, `.sh` and `.ipynb` files plus
//! one rule pack, then runs the binary over the batch with several reports,
//! with `--fix --unsafe-fixes`, with the mutated pack, and with `--fix` through
//! a symbolic link and on a hard-linked file. A run that panics, dies of a
//! signal, exceeds the time limit or exits 2 on a valid command is a crash,
//! and so is a link that `--fix` broke: the inputs that reproduce it are saved
//! under `--out`.
//!
//! Run it with `bash bench/fuzz.sh SECONDS`.

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Mutation fuzzer for npu-mem scan")]
struct Args {
    /// How long to run.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// The npu-mem binary to run.
    #[arg(long, default_value = "target/release/npu-mem")]
    bin: PathBuf,
    /// Where crashing inputs are saved.
    #[arg(long, default_value = "target/fuzz/crashes")]
    out: PathBuf,
    /// Extra directories of seed files (e.g. the benchmark corpus).
    #[arg(long)]
    seeds: Vec<PathBuf>,
    /// Random seed, for reproducing a session (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Files per batch.
    #[arg(long, default_value_t = 48)]
    batch: usize,
    /// Seconds one run may take before it counts as a hang.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
}

/// xorshift64*: small, fast and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Fragments that steer mutations towards what the scanner cares about.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "=",
    "*",
    "**",
    ".",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "\\\n",
    "\"\"\"",
    "'''",
    "'",
    "\"",
    "#",
    "f\"{",
    "}\"",
    "lambda ",
    "async ",
    "await ",
    "yield ",
    "with ",
    "for x in y:\n",
    "while 1:\n",
    "if x:\n",
    "else:\n",
    "def f(",
    "class C:\n",
    "return ",
    "global torch\n",
    "del torch\n",
    ".cuda()",
    ".cuda(0)",
    ".to(\"cuda\")",
    ".to(device)",
    "torch.cuda.",
    "torch.npu.",
    "torch_npu.",
    "\"cuda\"",
    "\"cuda:0\"",
    "\"nccl\"",
    "DataLoader(",
    "num_workers=",
    "pin_memory=True",
    "autocast(",
    "GradScaler()",
    "torch.cuda.empty_cache()",
    ".item()",
    "loss.backward()",
    "model.eval()",
    "torch.no_grad()",
    "import torch\n",
    "import torch as t\n",
    "import torch_npu\n",
    "from torch_npu.contrib import transfer_to_npu\n",
    "from torch.cuda.amp import autocast\n",
    "from torch.utils.data import DataLoader\n",
    "os.environ[\"PYTORCH_NPU_ALLOC_CONF\"] = \"",
    "CUDA_VISIBLE_DEVICES=",
    "export PYTORCH_CUDA_ALLOC_CONF=",
    "$(",
    "${",
    "%time ",
    "%%time\n",
    "!pip install x\n",
    "x?\n",
    "# npu-mem: ignore[TX001]",
    "# npu-mem: ignore-file[",
    " -- reason",
    "# -*- coding: latin-1 -*-\n",
    "\u{feff}",
    "\u{0}",
    "\u{7f}",
    "é",
    "€",
    "😀",
    "𝔘",
    "\u{2028}",
    "\u{200b}",
];

/// Applies 1 to about 8 random mutations to `data`, splicing from `other`.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let count = 1 + rng.below(4) + rng.below(5) * usize::from(rng.chance(30));
    for _ in 0..count {
        let len = data.len();
        let at = rng.below(len + 1);
        match rng.below(12) {
            0 if len > 0 => data[rng.below(len)] = rng.next() as u8,
            1 => {
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                data.splice(at..at, bytes);
            }
            2 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                data.drain(at.min(end)..end);
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(256)).min(len);
                let piece = data[start..end].to_vec();
                data.splice(at..at, piece);
            }
            4 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(512)).min(other.len());
                let cut = (at + rng.below(128)).min(len);
                data.splice(at..cut, other[start..end].iter().copied());
            }
            5 => swap_lines(rng, data),
            6 if rng.chance(3) => {
                // Deep nesting: the scanner must bound its stack.
                let depth = 1 + rng.below(20_000);
                let open = *rng.pick(b"([{");
                let close = match open {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                let mut nest = vec![open; depth];
                nest.push(b'1');
                nest.extend(std::iter::repeat_n(close, depth));
                data.splice(at..at, nest);
            }
            7 if rng.chance(3) => {
                // A long line: a repeated fragment with no newline.
                let piece = rng.pick(&[".cuda()", "x,", "torch.cuda.synchronize();", "\"cuda\"+"]).as_bytes();
                let times = 1 + rng.below(50_000);
                data.splice(at..at, piece.repeat(times));
            }
            _ => {
                let token = rng.pick(TOKENS).as_bytes().to_vec();
                data.splice(at..at, token);
            }
        }
    }
}

/// Swaps, duplicates or re-indents a line.
fn swap_lines(rng: &mut Rng, data: &mut Vec<u8>) {
    let mut lines: Vec<Vec<u8>> = data.split_inclusive(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if lines.is_empty() {
        return;
    }
    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
    match rng.below(3) {
        0 => lines.swap(a, b),
        1 => {
            let copy = lines[a].clone();
            lines.insert(b, copy);
        }
        _ => {
            let indent = b" ".repeat(rng.below(9));
            lines[a].splice(0..0, indent);
        }
    }
    *data = lines.concat();
}

/// A notebook mutated either as bytes or as cells whose sources are mutated.
fn mutate_notebook(rng: &mut Rng, seed: &[u8], python: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    let parsed: Option<serde_json::Value> = serde_json::from_slice(seed).ok();
    let Some(mut notebook) = parsed.filter(|_| rng.chance(75)) else {
        mutate(rng, &mut bytes, seed);
        return bytes;
    };
    if let Some(cells) = notebook.get_mut("cells").and_then(|c| c.as_array_mut()) {
        for cell in cells.iter_mut() {
            if !rng.chance(50) {
                continue;
            }
            let Some(source) = cell.get_mut("source") else { continue };
            let mut text = match &*source {
                serde_json::Value::Array(lines) => lines.iter().filter_map(|l| l.as_str()).collect::<String>(),
                other => other.as_str().unwrap_or_default().to_string(),
            }
            .into_bytes();
            let other = pick_file(rng, python);
            mutate(rng, &mut text, &other);
            let text = String::from_utf8_lossy(&text).into_owned();
            *source = if rng.chance(50) {
                serde_json::Value::from(text.split_inclusive('\n').collect::<Vec<_>>())
            } else {
                serde_json::Value::from(text)
            };
        }
    }
    let mut out = if rng.chance(50) { serde_json::to_vec_pretty(&notebook) } else { serde_json::to_vec(&notebook) }
        .unwrap_or(bytes);
    if rng.chance(10) {
        let other = out.clone();
        mutate(rng, &mut out, &other);
    }
    out
}

/// A random file of `files`, or nothing when there are none.
fn pick_file(rng: &mut Rng, files: &[Vec<u8>]) -> Vec<u8> {
    if files.is_empty() {
        Vec::new()
    } else {
        rng.pick(files).clone()
    }
}

/// Seed files by kind.
#[derive(Default)]
struct Seeds {
    python: Vec<Vec<u8>>,
    shell: Vec<Vec<u8>>,
    notebooks: Vec<Vec<u8>>,
    packs: Vec<Vec<u8>>,
}

impl Seeds {
    fn add_dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                self.add_dir(&path);
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else { continue };
            match path.extension().and_then(|e| e.to_str()) {
                Some("py") => self.python.push(bytes),
                Some("sh") => self.shell.push(bytes),
                Some("ipynb") => self.notebooks.push(bytes),
                Some("toml") => self.packs.push(bytes),
                _ => {}
            }
        }
    }
}

/// How one run of the binary ended.
enum Outcome {
    Fine,
    Crash(String),
}

/// Runs `bin` with `args` in `dir`, and judges the result.
fn run(bin: &Path, args: &[&str], dir: &Path, timeout: Duration, allowed: &[i32]) -> Outcome {
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Outcome::Crash(format!("cannot start {}: {e}", bin.display())),
    };
    // Drain stderr on a thread so a chatty run cannot block on a full pipe.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stderr.as_mut() {
            let _ = std::io::Read::read_to_string(pipe, &mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Outcome::Crash(format!("wait failed: {e}")),
        }
    };
    let stderr = reader.join().unwrap_or_default();
    match status {
        None => Outcome::Crash(format!("no result after {} s", timeout.as_secs())),
        Some(s) if stderr.contains("panicked") => Outcome::Crash(format!("panic ({s}): {}", tail(&stderr))),
        Some(s) => match s.code() {
            Some(code) if allowed.contains(&code) => Outcome::Fine,
            _ => Outcome::Crash(format!("{s}: {}", tail(&stderr))),
        },
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

/// The commands run on every batch directory, with the exit codes they may end with.
fn commands(pack: &str) -> Vec<(Vec<String>, Vec<i32>)> {
    let scan = |extra: &[&str]| {
        let mut args: Vec<String> = ["scan", ".", "--no-cache", "--fail-on", "never"].map(String::from).to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    vec![
        (scan(&["--format", "json", "--output-sarif", "out.sarif", "--output-markdown", "out.md"]), vec![0]),
        (scan(&["--format", "text", "--color", "always"]), vec![0]),
        (scan(&["--format", "github"]), vec![0]),
        (scan(&["--format", "gitlab"]), vec![0]),
        (scan(&["--rules", pack, "--format", "json"]), vec![0, 2]),
        (scan(&["--diff", "--unsafe-fixes"]), vec![0, 1]),
        (scan(&["--fix", "--unsafe-fixes", "--format", "json"]), vec![0]),
        (scan(&["--diff", "--unsafe-fixes"]), vec![0, 1]),
    ]
}

/// Runs `--fix` through a symbolic link and on a file with a second hard
/// link, made in a fresh directory under `work` from the batch's first two
/// Python files, and checks what must survive: the link, the pair of hard
/// links, and no temporary file. The command and what went wrong, if anything did.
#[cfg(unix)]
fn check_links(bin: &Path, work: &Path, batch: &[(String, Vec<u8>)], timeout: Duration) -> Option<(String, String)> {
    let mut python = batch.iter().filter(|(name, _)| name.ends_with(".py"));
    let (Some((_, first)), Some((_, second))) = (python.next(), python.next()) else { return None };
    let dir = work.join("links");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(dir.join("a.py"), first).ok()?;
    std::fs::write(dir.join("b.py"), second).ok()?;
    std::os::unix::fs::symlink("a.py", dir.join("link.py")).ok()?;
    std::fs::hard_link(dir.join("b.py"), dir.join("hard.py")).ok()?;
    let argv = ["scan", "link.py", "hard.py", "--no-cache", "--fail-on", "never", "--fix", "--unsafe-fixes"];
    let command = argv.join(" ");
    if let Outcome::Crash(why) = run(bin, &argv, &dir, timeout, &[0]) {
        return Some((command, why));
    }
    let still_link = std::fs::symlink_metadata(dir.join("link.py")).is_ok_and(|m| m.file_type().is_symlink());
    let links = std::fs::metadata(dir.join("hard.py")).map_or(0, |m| std::os::unix::fs::MetadataExt::nlink(&m));
    let same = std::fs::read(dir.join("hard.py")).ok() == std::fs::read(dir.join("b.py")).ok();
    let leftover = std::fs::read_dir(&dir).ok()?.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".tmp"));
    let broken = match () {
        _ if !still_link => "link.py is no longer a symbolic link",
        _ if links != 2 || !same => "hard.py was split from its other name",
        _ if leftover => "a temporary file was left behind",
        _ => return None,
    };
    Some((command, broken.to_string()))
}

#[cfg(not(unix))]
fn check_links(_: &Path, _: &Path, _: &[(String, Vec<u8>)], _: Duration) -> Option<(String, String)> {
    None
}

fn main() {
    let args = Args::parse();
    let start = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    let mut rng = Rng(start | 1);
    let mut seeds = Seeds::default();
    for dir in
        [Path::new("fixtures"), Path::new("rules")].iter().copied().chain(args.seeds.iter().map(PathBuf::as_path))
    {
        seeds.add_dir(dir);
    }
    if seeds.python.is_empty() || seeds.packs.is_empty() {
        eprintln!("fuzz: no seeds found; run from the repository root");
        std::process::exit(2);
    }
    let bin = std::fs::canonicalize(&args.bin).unwrap_or_else(|e| {
        eprintln!("fuzz: {}: {e}; build it with `cargo build --release`", args.bin.display());
        std::process::exit(2);
    });
    let work = std::env::temp_dir().join(format!("npu-mem-fuzz-{}", std::process::id()));
    let timeout = Duration::from_secs(args.timeout);
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let (mut rounds, mut inputs, mut crashes) = (0usize, 0usize, 0usize);
    eprintln!(
        "fuzz: seed {start}, {} python / {} shell / {} notebook / {} pack seeds",
        seeds.python.len(),
        seeds.shell.len(),
        seeds.notebooks.len(),
        seeds.packs.len()
    );
    while Instant::now() < deadline {
        let _ = std::fs::remove_dir_all(&work);
        if let Err(e) = std::fs::create_dir_all(&work) {
            eprintln!("fuzz: cannot create {}: {e}", work.display());
            std::process::exit(2);
        }
        let mut batch: Vec<(String, Vec<u8>)> = Vec::new();
        for i in 0..args.batch {
            let (name, bytes) = match rng.below(10) {
                0 if !seeds.shell.is_empty() => {
                    let mut b = rng.pick(&seeds.shell).clone();
                    let other = pick_file(&mut rng, &seeds.shell);
                    mutate(&mut rng, &mut b, &other);
                    (format!("s{i}.sh"), b)
                }
                1 | 2 if !seeds.notebooks.is_empty() => {
                    let seed = rng.pick(&seeds.notebooks).clone();
                    (format!("n{i}.ipynb"), mutate_notebook(&mut rng, &seed, &seeds.python))
                }
                _ => {
                    let mut b = rng.pick(&seeds.python).clone();
                    let other = rng.pick(&seeds.python).clone();
                    mutate(&mut rng, &mut b, &other);
                    (format!("p{i}.py"), b)
                }
            };
            batch.push((name, bytes));
        }
        let mut pack = rng.pick(&seeds.packs).clone();
        let other = rng.pick(&seeds.packs).clone();
        mutate(&mut rng, &mut pack, &other);
        let write_batch = |dir: &Path, files: &[(String, Vec<u8>)]| {
            for (name, bytes) in files {
                let _ = std::fs::write(dir.join(name), bytes);
            }
            let _ = std::fs::write(dir.join("pack.toml"), &pack);
        };
        write_batch(&work, &batch);
        inputs += batch.len() + 1;
        rounds += 1;
        for (step, (cmd, allowed)) in commands("pack.toml").into_iter().enumerate() {
            let argv: Vec<&str> = cmd.iter().map(String::as_str).collect();
            if let Outcome::Crash(why) = run(&bin, &argv, &work, timeout, &allowed) {
                crashes += 1;
                // Find the inputs that crash alone (replaying every command up
                // to this one); the whole batch if none does.
                let mut culprits: Vec<&(String, Vec<u8>)> = Vec::new();
                for file in &batch {
                    let alone = work.join("alone");
                    let _ = std::fs::remove_dir_all(&alone);
                    let _ = std::fs::create_dir_all(&alone);
                    write_batch(&alone, std::slice::from_ref(file));
                    let replay = commands("pack.toml");
                    let crashed = replay.iter().take(step + 1).any(|(cmd, allowed)| {
                        let argv: Vec<&str> = cmd.iter().map(String::as_str).collect();
                        matches!(run(&bin, &argv, &alone, timeout, allowed), Outcome::Crash(_))
                    });
                    if crashed {
                        culprits.push(file);
                    }
                }
                let saved = args.out.join(format!("crash-{start}-{rounds}"));
                let _ = std::fs::create_dir_all(&saved);
                let keep: Vec<(String, Vec<u8>)> =
                    if culprits.is_empty() { batch.clone() } else { culprits.into_iter().cloned().collect() };
                write_batch(&saved, &keep);
                let _ = std::fs::write(saved.join("README"), format!("npu-mem {}\n{why}\n", argv.join(" ")));
                eprintln!("fuzz: CRASH `{}` -> {}\n{why}", argv.join(" "), saved.display());
                break;
            }
        }
        if let Some((command, why)) = check_links(&bin, &work, &batch, timeout) {
            crashes += 1;
            let saved = args.out.join(format!("crash-{start}-{rounds}-links"));
            let _ = std::fs::create_dir_all(&saved);
            write_batch(&saved, &batch);
            let _ = std::fs::write(saved.join("README"), format!("npu-mem {command}\n{why}\n"));
            eprintln!("fuzz: CRASH `{command}` -> {}\n{why}", saved.display());
        }
        if rounds % 50 == 0 {
            eprintln!("fuzz: {rounds} rounds, {inputs} inputs, {crashes} crashes");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    println!("fuzz: {rounds} rounds, {inputs} inputs, {crashes} crashes in {} s (seed {start})", args.seconds);
    std::process::exit(i32::from(crashes > 0));
}
