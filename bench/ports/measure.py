#!/usr/bin/env python3
"""Measure npu-mem against real CUDA -> Ascend ports (see bench/ports.sh).

For each pair of bench/ports/pairs.tsv the upstream (GPU original) and the
port are materialised from local git mirrors (no network), then:

(a) recall: "migration lines" of the original (defined below) that carry a
    finding of any code when the original is scanned;
(b) findings on the ported side, with a deterministic sample for a human
    verdict (sample-<set>.tsv: round-robin over pairs, then over codes, then
    up to 2 findings of each code not yet drawn; messages keep quoted names
    but not quoted code, so no third-party source is committed);
(c) fix overlap: the fraction of migration lines that
    `scan --fix --unsafe-fixes` on a copy of the original also changes.

Classification of changed lines (per file present on both sides, Python only):
  A line of the original is *changed* when the line diff (difflib, lines
  compared after stripping trailing whitespace) deletes or replaces it.
  Pure insertions in the port have no original line and are counted apart
  ("inserted migration lines").  A changed line is *trivial*, and dropped, when
    - it is blank;
    - it is a comment line (first non-blank character '#');
    - it lies in a docstring / string-only statement (tokenize);
    - whitespace only: in the same hunk the port has a line equal to it once
      all whitespace is removed;
    - logging: it starts with print / logger. / logging. / log. / writer.add_ /
      wandb. / tb_writer. / summary_writer.;
    - import order: it is an import statement and the same statement (spaces
      removed) is still somewhere in the port's file.
  A non-trivial changed line is a *migration line* when the original line
  itself contains a migration token (MIGRATION_RE), or its hunk has at most
  SMALL_HUNK original lines and the port's side of the hunk contains one.
  (Large rewritten hunks only contribute the lines that carry a token, so an
  unrelated 200-line refactor that mentions `device` once does not count.)
The *non-trivial* set is also reported, as the broader (stricter) measure.
"""
import argparse
import collections
import difflib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize

SMALL_HUNK = 8

# What makes a changed line a migration line. `.cpu(` counts since
# 2026-11-29: a port that moves an operator the NPU lacks to the host (PPO's
# `MultivariateNormal(action_mean.cpu(), ...)`) changes the line with the
# operator only by that call.
MIGRATION_RE = re.compile(
    r"cuda|(?<![a-z])npu|nccl|hccl|gloo|\bapex\b|\bamp\b|autocast|GradScaler|scale_loss|loss_scale|opt_level|"
    r"\.half\(|\.cpu\(|float16|fp16|bf16|bfloat16|\bdevice\b|device_ids|DataParallel|DistributedDataParallel|"
    r"init_process_group|set_device|world_size|local_rank|MASTER_ADDR|MASTER_PORT|"
    r"pin_memory|num_workers|non_blocking|cudnn|synchronize|empty_cache|torch_npu|"
    r"Fused|combine_grad|\.to\(|int64|int32|\.long\(|\.int\(|\bdtype\b|profiler|"
    r"\bEvent\b|deterministic|\bstream\b|max_memory|memory_allocated|jit\.|"
    r"drop_last|persistent_workers|prefetch_factor|\bdist\.",
    re.I)

# Categories of a missed migration line, first match wins (see categorise).
# "cuda-api-unflagged" is tested on the original line only: a CUDA name the
# tool could have reported.  The others say what the engineers wrote instead.
CATEGORIES = [
    ("cuda-api-unflagged", r"cuda|nccl|cudnn"),
    ("fused-optimizer", r"NpuFused\w*|Fused(Adam|SGD|LAMB|Lamb|AdamW|RMSprop)\w*|combine_grad|apex\.optimizers"),
    ("amp-apex-added", r"amp\.initialize|scale_loss|\bapex\b|\bamp\b|opt_level|loss_scale|GradScaler|autocast|\.half\(|float16|fp16|bf16|bfloat16"),
    ("npu-op-substitution", r"(?<![a-z])npu_\w+|(?-i:Npu[A-Z]\w*)|torch_npu\.\w+|FusedLayerNorm|roi_align|\bnms\b|format_cast"),
    ("distributed-launch", r"hccl|gloo|DistributedDataParallel|DataParallel|init_process_group|world_size|local_rank|\brank\b|MASTER_|\bdist\.|device_ids|spawn|DistributedSampler"),
    ("dataloader-host-pipeline", r"pin_memory|num_workers|drop_last|persistent_workers|prefetch_factor|DataLoader|sampler"),
    ("dtype-cast", r"int64|int32|\.long\(|\.int\(|\bdtype\b|\.float\(|double"),
    ("sync-timing-profiling", r"synchronize|\bEvent\b|profiler|profile|\bstream\b|time\.time"),
    ("backend-flags-determinism", r"deterministic|benchmark|jit\.|manual_seed"),
    ("memory-api", r"empty_cache|max_memory|memory_allocated|memory_reserved"),
    ("device-plumbing", r"(?<![a-z])npu|\bdevice\b|\.to\(|set_device"),
]
CATEGORIES = [(n, re.compile(p, re.I)) for n, p in CATEGORIES]

LOG_RE = re.compile(r"^\s*(print\s*\(|print\s+['\"]|logger\.|logging\.|log\.|writer\.add_|wandb\.|tb_writer\.|summary_writer\.)")
IMPORT_RE = re.compile(r"^\s*(import\s+\S|from\s+\S+\s+import\s)")


def die(msg):
    print("ports: " + msg, file=sys.stderr)
    sys.exit(2)


def mirror_git_dir(root, repo):
    base = os.path.join(root, repo.replace("/", "+"), "repo")
    for cand in (os.path.join(base, ".git"), base):
        if os.path.isfile(os.path.join(cand, "HEAD")):
            return cand
    return None


def read_tsv(path):
    """Rows of a tab-separated file as dicts keyed by its header; `#` lines are comments."""
    rows, header = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if header is None:
                header = cols
                continue
            rows.append(dict(zip(header, cols)))
    return rows


def git(gd, *args, text=True):
    return subprocess.run(["git", "--git-dir=" + gd, *args], check=True, capture_output=True, text=text).stdout


# Files larger than this are left out of a materialised tree (weights,
# images, datasets): nothing the scanner reads is that large in these repos.
MAX_MATERIALISED_BYTES = 1 << 20


def materialise(gd, commit, directory, dest):
    """Write the files of commit:directory into dest, as a checkout has them:
    code, shell scripts and notebooks, but also the documents, CUDA sources and
    project markers (README, requirements.txt, setup.cfg) the scanner reads
    for launch steps, kernels and project boundaries; files over
    MAX_MATERIALISED_BYTES and symlinks are left out. Blobs absent from a
    partial mirror are skipped and reported."""
    os.makedirs(dest, exist_ok=True)
    spec = commit if directory in (".", "") else f"{commit}:{directory}"
    entries = []
    for line in git(gd, "ls-tree", "-r", "-l", "-z", spec).split("\0"):
        if not line:
            continue
        meta, name = line.split("\t", 1)
        mode, kind, oid, size = meta.split()
        # A blob absent from a partial mirror has no size ("BAD"): the code
        # files among those are asked for, and reported absent.
        small = int(size) <= MAX_MATERIALISED_BYTES if size.isdigit() else name.endswith((".py", ".sh", ".ipynb"))
        if kind == "blob" and mode != "120000" and small:
            entries.append((name, oid))
    if not entries:
        return []
    proc = subprocess.run(["git", "--git-dir=" + gd, "cat-file", "--batch"],
                          input="".join(oid + "\n" for _, oid in entries).encode(),
                          capture_output=True, check=True)
    data, pos, absent = proc.stdout, 0, []
    for name, oid in entries:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode().split()
        pos = nl + 1
        if len(header) < 3 or header[1] == "missing":
            absent.append(name)
            continue
        size = int(header[2])
        blob = data[pos:pos + size]
        pos += size + 1
        out = os.path.join(dest, name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(blob)
    if absent:
        print(f"ports: {len(absent)} file(s) absent from mirror {gd} at {commit[:10]}, skipped: "
              + ", ".join(absent[:5]), file=sys.stderr)
    return [n for n, _ in entries if n not in absent]


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.decode("utf-8", "replace").splitlines()


def docstring_lines(lines):
    """1-based line numbers covered by string-only statements (docstrings)."""
    out = set()
    try:
        toks = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    prev = tokenize.NEWLINE
    for i, t in enumerate(toks):
        if t.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
            # a statement that is only a string: next significant token ends the line
            j = i + 1
            while j < len(toks) and toks[j].type in (tokenize.COMMENT, tokenize.NL):
                j += 1
            if j >= len(toks) or toks[j].type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                out.update(range(t.start[0], t.end[0] + 1))
        if t.type not in (tokenize.COMMENT, tokenize.NL):
            prev = t.type
    return out


def squash(s):
    return "".join(s.split())


def classify_file(orig, port):
    """Return (nontrivial, migration, inserted_migration, hunks) for one file.

    nontrivial/migration: dict orig_line(1-based) -> (port_first_line, port_side_text)
    """
    a = [l.rstrip() for l in orig]
    b = [l.rstrip() for l in port]
    doc = docstring_lines(orig)
    port_imports = {squash(l) for l in b if IMPORT_RE.match(l)}
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    nontrivial, migration = {}, {}
    inserted = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        port_side = b[j1:j2]
        port_text = "\n".join(port_side)
        if tag == "insert":
            for k, l in enumerate(port_side):
                if l.strip() and not l.strip().startswith("#") and MIGRATION_RE.search(l):
                    inserted.append((j1 + k + 1, l))
            continue
        port_sq = {squash(l) for l in port_side}
        small = (i2 - i1) <= SMALL_HUNK
        port_has_token = bool(MIGRATION_RE.search("\n".join(l for l in port_side if not l.strip().startswith("#"))))
        for i in range(i1, i2):
            line = a[i]
            s = line.strip()
            n = i + 1
            if not s or s.startswith("#") or n in doc:
                continue
            if squash(line) in port_sq:
                continue
            if LOG_RE.match(line):
                continue
            if IMPORT_RE.match(line) and squash(line) in port_imports:
                continue
            info = (j1 + 1, port_text, small)
            nontrivial[n] = info
            if MIGRATION_RE.search(line) or (small and port_has_token):
                migration[n] = info
    return nontrivial, migration, inserted


def changed_orig_lines(orig, fixed):
    a = [l.rstrip() for l in orig]
    b = [l.rstrip() for l in fixed]
    out = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(i1 + 1, i2 + 1))
    return out


def port_entries(root):
    """The runs a port names in its own test/*.sh, as --entry arguments
    (PORTS_ENTRIES=test; none otherwise)."""
    test = os.path.join(root, "test")
    if os.environ.get("PORTS_ENTRIES") != "test" or not os.path.isdir(test):
        return []
    scripts = sorted(f for f in os.listdir(test) if f.endswith(".sh"))
    return [a for s in scripts for a in ("--entry", "bash test/" + s)]


def original_entries(root, port_report):
    """The scripts the port's named runs start, where the original has them:
    the port's real setting, on the original (PORTS_ENTRIES=test)."""
    run = (port_report or {}).get("run") or {}
    present = [s for s in run.get("scripts", []) if os.path.isfile(os.path.join(root, s))]
    return [a for s in present for a in ("--entry", s)]


def scan(binary, root, extra=(), report=None):
    """The findings of a scan of root; `report`, a dict, receives the whole JSON report."""
    r = subprocess.run([binary, "scan", ".", "--format", "json", "--no-cache", "-q", "--fail-on", "never", *extra],
                       cwd=root, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        die(f"npu-mem failed in {root} (exit {r.returncode}): {r.stderr[-2000:]}")
    if "--fix" in extra:
        return None
    rep = json.loads(r.stdout)
    if report is not None:
        report.update(rep)
    out = []
    for f in rep.get("findings", []):
        p = f["path"]
        if p.startswith("./"):
            p = p[2:]
        if f.get("cell") is not None:
            continue
        out.append(dict(code=f["code"], path=p, line=f["line"], end_line=f.get("end_line") or f["line"],
                        severity=f["severity"], message=f["message"], blocker=f.get("blocker"),
                        auto_migrated=f.get("auto_migrated"), advisory=f.get("advisory"),
                        unlaunched=f.get("unlaunched")))
    return out


def categorise(orig_line, port_text, small=True):
    """What the engineers did: the port's side of a small hunk first, then the
    original line; for a large hunk the original line first."""
    m = CATEGORIES[0][1].search(orig_line)
    if m:
        return CATEGORIES[0][0], m.group(0)
    texts = (port_text, orig_line) if small else (orig_line, port_text)
    for text in texts:
        for name, rx in CATEGORIES[1:]:
            m = rx.search(text)
            if m:
                return name, m.group(0)
    return "other", ""


def no_source(message):
    """Keep third-party code out of committed results: a message's quoted
    spans stay only when they are a name (dotted identifier, a call of one
    without arguments, or a short string literal); other quoted code becomes `...`."""
    def keep(m):
        span = m.group(1)
        if re.fullmatch(r"[\w.]+(\(\))?|'[\w:.-]{0,20}'|\"[\w:.-]{0,20}\"", span):
            return m.group(0)
        return "`...`"
    return re.sub(r"`([^`]*)`", keep, message)


def ranked(counter):
    """A counter as a dict, most frequent first, ties by name (deterministic)."""
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def key(*parts):
    return hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()


def sample(findings, n):
    """Deterministic sample spread over pairs and codes: round-robin over pairs,
    inside a pair round-robin over codes, each code's findings in hash order."""
    by_pair = collections.OrderedDict()
    for f in sorted(findings, key=lambda f: f["model"]):
        by_pair.setdefault(f["model"], collections.defaultdict(list))[f["code"]].append(f)
    queues = {}
    for model, codes in by_pair.items():
        cq = []
        for code in sorted(codes):
            cq.append(collections.deque(sorted(codes[code], key=lambda f: key(f["model"], f["path"], f["line"], f["code"]))))
        queues[model] = collections.deque(cq)
    out = []
    while len(out) < n and any(queues.values()):
        for model in list(queues):
            cq = queues[model]
            if not cq or len(out) >= n:
                continue
            q = cq.popleft()
            out.append(q.popleft())
            if q:
                cq.append(q)
    return out


def write_sample(path, sname, found, n, pdir):
    """The stratified sample of `found`, then up to 2 findings of each code
    the round-robin missed, so that every code of the set is judged."""
    smp = sample(found, n)
    have = {f["code"] for f in smp}
    for code in sorted({f["code"] for f in found} - have):
        extra = sorted((f for f in found if f["code"] == code),
                       key=lambda f: key(f["model"], f["path"], f["line"], f["code"]))
        smp.extend(extra[:2])
    with open(path, "w") as f:
        f.write("id\tset\tmodel\tcode\tseverity\tadvisory\tlocation\tmessage\n")
        for i, x in enumerate(smp, 1):
            msg = no_source(x["message"].replace("\t", " ").replace("\n", " "))
            f.write(f"{sname[0]}{i:03d}\t{sname}\t{x['model']}\t{x['code']}\t{x['severity']}\t"
                    f"{'yes' if x['advisory'] else 'no'}\t{pdir[x['model']]}/{x['path']}:{x['line']}\t{msg}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs")
    ap.add_argument("binary")
    ap.add_argument("--mirrors", default=os.environ.get("PORTS_MIRRORS", "/work/.mirror"))
    ap.add_argument("--out", default="bench/ports/results")
    ap.add_argument("--sample", type=int, default=80)
    ap.add_argument("--only", default="", help="comma-separated models to run")
    ap.add_argument("--keep", default="", help="keep the materialised trees in this directory")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        die(f"no executable npu-mem at {binary} (cargo build --release)")

    pairs = read_tsv(args.pairs)
    if args.only:
        keep = set(args.only.split(","))
        pairs = [p for p in pairs if p["model"] in keep]

    # Mirrors first: say clearly what is missing and how to get it.
    missing = []
    for p in pairs:
        for repo, commit in ((p["port_repo"], p["port_commit"]), (p["upstream_repo"], p["upstream_commit"])):
            gd = mirror_git_dir(args.mirrors, repo)
            if gd is None:
                missing.append(f"{repo}: no mirror at {args.mirrors}/{repo.replace('/', '+')}/repo "
                               f"(get it with the fetch tool: github:{repo}, or "
                               f"git clone --bare https://github.com/{repo} {args.mirrors}/{repo.replace('/', '+')}/repo)")
            elif subprocess.run(["git", "--git-dir=" + gd, "cat-file", "-e", commit + "^{commit}"],
                                capture_output=True).returncode != 0:
                missing.append(f"{repo}: mirror {gd} lacks commit {commit} (refresh the mirror)")
    if missing:
        die("missing mirrors or commits:\n  " + "\n  ".join(sorted(set(missing))))

    os.makedirs(args.out, exist_ok=True)
    tmp = args.keep or tempfile.mkdtemp(prefix="npu-mem-ports-")
    per_pair = []
    port_findings_all = []
    missed_rows = []
    inserted_rows = []
    migration_rows = []
    for p in pairs:
        model = p["model"]
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", model)
        d_orig, d_port, d_fix = (os.path.join(tmp, tag, s) for s in ("orig", "port", "fixed"))
        for d in (d_orig, d_port, d_fix):
            shutil.rmtree(d, ignore_errors=True)
        ugd = mirror_git_dir(args.mirrors, p["upstream_repo"])
        pgd = mirror_git_dir(args.mirrors, p["port_repo"])
        materialise(ugd, p["upstream_commit"], p["upstream_dir"], d_orig)
        materialise(pgd, p["port_commit"], p["port_dir"], d_port)
        shutil.copytree(d_orig, d_fix)

        # file mapping: port relative path -> upstream relative path
        if p["mapping"] == "same":
            mapping = {}
            for root, _, files in os.walk(d_port):
                for fn in files:
                    if fn.endswith(".py"):
                        rel = os.path.relpath(os.path.join(root, fn), d_port)
                        if os.path.isfile(os.path.join(d_orig, rel)):
                            mapping[rel] = rel
        else:
            mapping = dict(x.split("=", 1) for x in p["mapping"].split(";") if x)

        port_report = {}
        port_f = scan(binary, d_port, port_entries(d_port), port_report)
        orig_f = scan(binary, d_orig, original_entries(d_orig, port_report))
        scan(binary, d_fix, ("--fix", "--unsafe-fixes"))
        by_line = collections.defaultdict(list)
        for f in orig_f:
            for ln in range(f["line"], f["end_line"] + 1):
                by_line[(f["path"], ln)].append(f["code"])

        n_nontriv = n_mig = hit_mig = hit_nontriv = fix_mig = files_changed = 0
        hit_codes = collections.Counter()
        for prel, urel in sorted(mapping.items()):
            ol = read_lines(os.path.join(d_orig, urel))
            pl = read_lines(os.path.join(d_port, prel))
            if [l.rstrip() for l in ol] == [l.rstrip() for l in pl]:
                continue
            files_changed += 1
            nontriv, mig, ins = classify_file(ol, pl)
            fixed_changed = changed_orig_lines(ol, read_lines(os.path.join(d_fix, urel)))
            n_nontriv += len(nontriv)
            n_mig += len(mig)
            for n in nontriv:
                if by_line.get((urel, n)):
                    hit_nontriv += 1
            for n, (pj, ptext, small) in sorted(mig.items()):
                codes = by_line.get((urel, n))
                migration_rows.append(dict(set=p["set"], model=model, orig=f"{urel}:{n}",
                                           port=f"{p['port_dir']}/{prel}:{pj}",
                                           codes=",".join(sorted(set(codes or []))) or "-"))
                if codes:
                    hit_mig += 1
                    hit_codes.update(sorted(set(codes)))
                else:
                    cat, tok = categorise(ol[n - 1], ptext, small)
                    missed_rows.append(dict(set=p["set"], model=model, category=cat, token=tok,
                                            orig=f"{urel}:{n}", port=f"{p['port_dir']}/{prel}:{pj}"))
                if n in fixed_changed:
                    fix_mig += 1
            for j, l in ins:
                cat, tok = categorise("", l)
                inserted_rows.append(dict(set=p["set"], model=model, category=cat, token=tok,
                                          port=f"{p['port_dir']}/{prel}:{j}"))
        for f in port_f:
            f.update(set=p["set"], model=model)
        port_findings_all.extend(port_f)
        per_pair.append(dict(set=p["set"], model=model, files_compared=len(mapping), files_changed=files_changed,
                             nontrivial_lines=n_nontriv, nontrivial_hit=hit_nontriv,
                             migration_lines=n_mig, migration_hit=hit_mig, fix_overlap=fix_mig,
                             inserted_migration_lines=sum(1 for r in inserted_rows if r["model"] == model),
                             orig_findings=len(orig_f), port_findings=len(port_f),
                             port_codes=ranked(collections.Counter(f["code"] for f in port_f)),
                             hit_codes=ranked(hit_codes)))
        pp = per_pair[-1]
        print(f"{p['set']:8} {model:22} files {files_changed:3}/{len(mapping):3}  migration {hit_mig:4}/{n_mig:4}"
              f"  nontrivial {hit_nontriv:4}/{n_nontriv:4}  fix {fix_mig:4}  port findings {len(port_f)}", file=sys.stderr)

    def ratio(a, b):
        return round(a / b, 3) if b else None

    sets = collections.OrderedDict()
    for pp in per_pair:
        s = sets.setdefault(pp["set"], collections.Counter())
        for k in ("migration_lines", "migration_hit", "nontrivial_lines", "nontrivial_hit", "fix_overlap",
                  "inserted_migration_lines", "port_findings", "orig_findings"):
            s[k] += pp[k]
        s["pairs"] += 1
    summary = {}
    for name, s in sets.items():
        summary[name] = dict(pairs=s["pairs"],
                             recall=ratio(s["migration_hit"], s["migration_lines"]),
                             migration_lines=s["migration_lines"], migration_hit=s["migration_hit"],
                             recall_nontrivial=ratio(s["nontrivial_hit"], s["nontrivial_lines"]),
                             nontrivial_lines=s["nontrivial_lines"], nontrivial_hit=s["nontrivial_hit"],
                             fix_overlap=ratio(s["fix_overlap"], s["migration_lines"]), fix_overlap_lines=s["fix_overlap"],
                             inserted_migration_lines=s["inserted_migration_lines"],
                             orig_findings=s["orig_findings"], port_findings=s["port_findings"],
                             pair_recall_mean=round(sum(ratio(pp["migration_hit"], pp["migration_lines"]) or 0
                                                         for pp in per_pair if pp["set"] == name) / s["pairs"], 3))
        summary[name]["port_codes"] = ranked(collections.Counter(
            f["code"] for f in port_findings_all if f["set"] == name))
        summary[name]["port_alarms"] = sum(1 for f in port_findings_all if f["set"] == name and not f["advisory"])
        summary[name]["port_alarm_codes"] = ranked(collections.Counter(
            f["code"] for f in port_findings_all if f["set"] == name and not f["advisory"]))

    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(dict(sets=summary, pairs=per_pair), f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(args.out, "per-pair.tsv"), "w") as f:
        cols = ["set", "model", "files_changed", "migration_lines", "migration_hit", "recall", "nontrivial_lines",
                "nontrivial_hit", "fix_overlap", "fix_ratio", "inserted_migration_lines", "orig_findings",
                "port_findings", "hit_codes"]
        f.write("\t".join(cols) + "\n")
        for pp in per_pair:
            row = dict(pp, recall=ratio(pp["migration_hit"], pp["migration_lines"]),
                       fix_ratio=ratio(pp["fix_overlap"], pp["migration_lines"]),
                       hit_codes=",".join(f"{k}:{v}" for k, v in pp["hit_codes"].items()))
            f.write("\t".join(str(row[c]) for c in cols) + "\n")
    # every migration line with the codes that hit it (locations only), for readings of the lines
    with open(os.path.join(args.out, "migration-lines.tsv"), "w") as f:
        f.write("set\tmodel\torig_location\tport_location\tcodes\n")
        for r in migration_rows:
            f.write(f"{r['set']}\t{r['model']}\t{r['orig']}\t{r['port']}\t{r['codes']}\n")
    # missed migration lines by category, with examples (locations only, no source)
    with open(os.path.join(args.out, "missed.tsv"), "w") as f:
        f.write("set\tmodel\tcategory\ttoken\torig_location\tport_location\n")
        for r in missed_rows:
            f.write("\t".join([r["set"], r["model"], r["category"], r["token"], r["orig"], r["port"]]) + "\n")
    with open(os.path.join(args.out, "missed-categories.tsv"), "w") as f:
        f.write("set\tcategory\tmissed_lines\tpairs\texamples\n")
        for sname in sets:
            rows = [r for r in missed_rows if r["set"] == sname]
            cnt = collections.Counter(r["category"] for r in rows)
            for cat, c in ranked(cnt).items():
                rs = [r for r in rows if r["category"] == cat]
                models = sorted({r["model"] for r in rs})
                ex = sorted(rs, key=lambda r: key(r["model"], r["orig"]))
                seen, exs = set(), []
                for r in ex:
                    if r["model"] in seen:
                        continue
                    seen.add(r["model"])
                    exs.append(f"{r['port']} (orig {r['orig']}, {r['token']})")
                    if len(exs) == 3:
                        break
                f.write(f"{sname}\t{cat}\t{c}\t{len(models)}\t{'; '.join(exs)}\n")
    with open(os.path.join(args.out, "inserted-categories.tsv"), "w") as f:
        f.write("set\tcategory\tinserted_lines\tpairs\n")
        for sname in sets:
            rows = [r for r in inserted_rows if r["set"] == sname]
            cnt = collections.Counter(r["category"] for r in rows)
            for cat, c in ranked(cnt).items():
                f.write(f"{sname}\t{cat}\t{c}\t{len({r['model'] for r in rows if r['category'] == cat})}\n")
    pdir = {p["model"]: p["port_dir"] for p in pairs}
    for sname in sets:
        found = [f for f in port_findings_all if f["set"] == sname]
        # Every finding, and the alarms only: advisory findings (info,
        # "handled by transfer_to_npu at run time") ask nothing of the user.
        write_sample(os.path.join(args.out, f"sample-{sname}.tsv"), sname, found, args.sample, pdir)
        alarms = [f for f in found if not f["advisory"]]
        write_sample(os.path.join(args.out, f"sample-{sname}-alarms.tsv"), sname, alarms, args.sample, pdir)
    json.dump(summary, sys.stdout, indent=1)
    print()
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
