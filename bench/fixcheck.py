#!/usr/bin/env python3
"""Do programs fixed by `npu-mem scan --fix` still send work to the right device?

For each project tree given with --project NAME=DIR (an exported copy of the
upstream repository), the harness:

1. copies the tree three times: as it is, fixed by `npu-mem scan . --fix`,
   and fixed by `npu-mem scan . --fix --unsafe-fixes`; it saves each diff;
2. runs the project's entry commands (listed in PROJECTS; where a full run
   needs data the harness has not got, a driver under stubtorch/drivers runs
   the entry with the data loading replaced) under the stub torch of
   bench/stubtorch/site, once per host mode;
3. checks the device of every recorded call:
   - `cuda` host: nothing targets npu, and the run ends normally;
   - `cuda-npulib` host (torch_npu importable but no NPU): the same; this
     lets a fixed program that imports torch_npu unconditionally reach its
     CUDA branches;
   - `npu` host: nothing targets cuda (a torch.cuda query that answers
     False/0 is listed, not failed), the run reaches the NPU (at least one
     call targets npu), and it ends normally.

The original program runs on the cuda host as the baseline: a failure there
is the stub's or the harness's, not the fix's. It also runs on the npu host
for reference (no verdict).

Usage:
  python3 bench/fixcheck.py --python /path/to/python-with-numpy \\
      --project examples=/tmp/proj-examples --project dino=/tmp/proj-dino \\
      --work /tmp/fixcheck --json /tmp/fixcheck/results.json

The Python given with --python runs the programs; it needs numpy, PyYAML,
Pillow and tqdm (real packages: the stub replaces torch only).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
SITE = os.path.join(BENCH, "stubtorch", "site")
DRIVERS = os.path.join(BENCH, "stubtorch", "drivers")

#: Third-party packages the programs import at start-up that the stub serves permissively.
PERMISSIVE = "cv2,matplotlib,scipy,pandas,seaborn,thop,pycocotools"

#: Per project: the torch release the program needs (the stub imitates it,
#: see stubtorch/site/stubrec.py), the `--target`s npu-mem fixes it for,
#: the files whose diff matters, and the runs. A run's `argv`
#: may use {python}, {drivers} and {data} (a scratch directory that `data`
#: fills: "corpus" writes a tiny text corpus, "checkpoint" an empty file).
PROJECTS = {
    "examples": {
        # imagenet and word_language_model call torch.accelerator (torch >= 2.6).
        "torch": "2.6", "targets": ["2.1", "2.6"],
        "files": ["imagenet/main.py", "word_language_model/main.py", "word_language_model/model.py"],
        "runs": [
            {"name": "imagenet: one process", "cwd": "imagenet",
             "argv": ["{python}", "main.py", "--dummy", "-a", "resnet18", "--epochs", "1", "-b", "2", "-j", "0",
                      "-p", "1"]},
            {"name": "imagenet: --gpu 0, spawned DDP, --resume", "cwd": "imagenet", "data": "checkpoint",
             "argv": ["{python}", "main.py", "--dummy", "-a", "resnet18", "--epochs", "1", "-b", "2", "-j", "0",
                      "-p", "1", "--gpu", "0", "--resume", "{data}/checkpoint.pth",
                      "--multiprocessing-distributed", "--world-size", "1", "--rank", "0",
                      "--dist-url", "tcp://127.0.0.1:1"]},
            {"name": "word_language_model: --accel", "cwd": "word_language_model", "data": "corpus",
             "argv": ["{python}", "main.py", "--accel", "--data", "{data}", "--epochs", "1", "--batch_size", "2",
                      "--bptt", "4", "--emsize", "8", "--nhid", "8", "--save", "{data}/model.pt", "--dry-run"]},
        ],
    },
    "PyTorch_YOLOv4": {
        "torch": "2.1", "targets": ["2.1"],
        "files": ["train.py", "utils/torch_utils.py", "utils/utils.py"],
        "runs": [
            {"name": "train.py (driver: synthetic loader), --device 0", "cwd": ".",
             "argv": ["{python}", "{drivers}/yolov4_train.py", "--device", "0"]},
            {"name": "train.py (driver), torch.distributed.launch --local_rank 0", "cwd": ".",
             "env": {"WORLD_SIZE": "1", "RANK": "0"},
             "argv": ["{python}", "{drivers}/yolov4_train.py", "--device", "0", "--local_rank", "0"]},
        ],
    },
    "dino": {
        "torch": "2.1", "targets": ["2.1"],
        "files": ["main_dino.py", "utils.py", "vision_transformer.py"],
        "runs": [
            {"name": "main_dino.py, one process, --use_fp16 true", "cwd": ".", "data": "images",
             "argv": ["{python}", "main_dino.py", "--arch", "vit_tiny", "--epochs", "1", "--batch_size_per_gpu",
                      "2", "--num_workers", "0", "--data_path", "{data}", "--output_dir", "{data}/out",
                      "--warmup_epochs", "0", "--warmup_teacher_temp_epochs", "0",
                      "--use_fp16", "true", "--saveckp_freq", "1"]},
            {"name": "main_dino.py under torchrun (RANK set)", "cwd": ".", "data": "images",
             "env": {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                     "MASTER_PORT": "29500"},
             "argv": ["{python}", "main_dino.py", "--arch", "vit_tiny", "--epochs", "1", "--batch_size_per_gpu",
                      "2", "--num_workers", "0", "--data_path", "{data}", "--output_dir", "{data}/out",
                      "--warmup_epochs", "0", "--warmup_teacher_temp_epochs", "0",
                      "--use_fp16", "false", "--optimizer", "sgd"]},
            {"name": "utils.PCA.apply (driver)", "cwd": ".",
             "argv": ["{python}", "{drivers}/dino_utils.py"]},
        ],
    },
}

FIX_MODES = {"original": None, "safe": ["--fix"], "unsafe": ["--fix", "--unsafe-fixes"]}
HOSTS = {"original": ["cuda", "npu"], "safe": ["cuda", "cuda-npulib", "npu"],
         "unsafe": ["cuda", "cuda-npulib", "npu"]}


def make_data(kind, directory):
    """Fill `directory` with the synthetic input a run needs."""
    if kind == "corpus":
        words = "the cat sat on the mat and the dog sat on the log".split()
        for split in ("train", "valid", "test"):
            with open(os.path.join(directory, f"{split}.txt"), "w", encoding="utf-8") as out:
                for i in range(6):
                    out.write(" ".join(words[i:] + words[:i]) + "\n")
    elif kind == "checkpoint":
        open(os.path.join(directory, "checkpoint.pth"), "wb").close()
    elif kind == "images":
        os.makedirs(os.path.join(directory, "class0"))


def fix_copy(tree, dest, mode, target, npu_mem, diff_path):
    """Copy `tree` to `dest`, apply the fix mode for `target`, and write the diff; return npu-mem's exit code."""
    shutil.copytree(tree, dest, symlinks=True)
    if FIX_MODES[mode] is None:
        return 0
    run = subprocess.run([npu_mem, "scan", ".", *FIX_MODES[mode], "--target", target, "--fail-on", "never",
                          "--no-cache", "-q", "--format", "concise"], cwd=dest, capture_output=True, text=True)
    diff = subprocess.run(["diff", "-ru", "--exclude=.npu-mem-cache", tree, dest], capture_output=True, text=True)
    with open(diff_path, "w", encoding="utf-8") as out:
        out.write(diff.stdout)
    if run.returncode not in (0, 1):
        sys.stderr.write(run.stderr)
    return run.returncode


def crash_site(stderr, stdout, root):
    """The exception line and the innermost frame inside the project, from a traceback.

    A program that exits on purpose (`sys.exit(1)`) may say why on stdout only.
    """
    if not stderr.strip():
        said = stdout.strip().splitlines()
        return f"exited, saying {said[-1]!r}" if said else "exited with no message"
    frames = re.findall(r'File "([^"]+)", line (\d+)', stderr)
    inside = [(f, n) for f, n in frames if os.path.abspath(f).startswith(root + os.sep)]
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    where = f"{os.path.relpath(inside[-1][0], root)}:{inside[-1][1]}" if inside else "?"
    return f"{last} at {where}"


def verdict(host, result, root):
    """PASS/FAIL and the reasons, for one run on one host."""
    events = result["events"]
    wrong = [f"{e['what']} -> {e['target'] or '?'} ({e['detail']}) at {e['where']}"
             for e in events if e["severity"] == "error"]
    # One line per distinct wrong call, in the order first seen, with its count.
    counts = {}
    for line in wrong:
        counts[line] = counts.get(line, 0) + 1
    reasons = [line + (f" (x{n})" if n > 1 else "") for line, n in counts.items()]
    if result["rc"] != 0:
        reasons.append(f"exit {result['rc']}: " + crash_site(result["stderr"], result["stdout"], root))
    if host == "npu" and not any(e["target"] == "npu" for e in events):
        reasons.append("never reached the NPU (no call targets npu)")
    return ("PASS" if not reasons else "FAIL"), reasons


def run_one(spec, root, host, torch, python, scratch):
    """Run one entry under the stub on one host; return exit code, events and stderr."""
    data = tempfile.mkdtemp(dir=scratch)
    if spec.get("data"):
        make_data(spec["data"], data)
    log = os.path.join(data, "events.json")
    env = dict(os.environ, PYTHONPATH=SITE, STUBTORCH_HOST=host, STUBTORCH_LOG=log,
               STUBTORCH_TORCH=torch, STUBTORCH_PERMISSIVE=PERMISSIVE, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
    env.update(spec.get("env", {}))
    argv = [a.format(python=python, drivers=DRIVERS, data=data) for a in spec["argv"]]
    try:
        proc = subprocess.run(argv, cwd=os.path.join(root, spec["cwd"]), env=env, capture_output=True, text=True,
                              timeout=300)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = -1, "", "timed out after 300 s"
    events = []
    if os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            events = json.load(f)["events"]
    return {"rc": rc, "events": events, "stdout": stdout[-2000:], "stderr": stderr[-4000:]}


def changed_lines(diff_path):
    """How many lines a diff adds and removes."""
    added = removed = 0
    with open(diff_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return added, removed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", required=True, metavar="NAME=DIR",
                        help=f"a project tree; NAME is one of {', '.join(PROJECTS)}")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs the programs")
    parser.add_argument("--npu-mem", default=os.path.join(REPO, "target", "release", "npu-mem"))
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "fixcheck"))
    parser.add_argument("--json", help="write every run's verdict and events here")
    args = parser.parse_args()

    if not os.path.exists(args.npu_mem):
        sys.exit(f"fixcheck: {args.npu_mem} not found: run `cargo build --release` first")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    scratch = os.path.join(args.work, "scratch")
    os.makedirs(scratch)
    results = []
    for item in args.project:
        name, _, tree = item.partition("=")
        if name not in PROJECTS or not os.path.isdir(tree):
            sys.exit(f"fixcheck: --project {item}: expected NAME=DIR with NAME in {', '.join(PROJECTS)}")
        project = PROJECTS[name]
        print(f"== {name}: the stub imitates torch {project['torch']}")
        for target in project["targets"]:
            for mode in FIX_MODES:
                if mode == "original" and target != project["targets"][0]:
                    continue
                label = mode if mode == "original" else f"{mode}@{target}"
                root = os.path.abspath(os.path.join(args.work, f"{name}-{label}"))
                diff_path = os.path.join(args.work, f"{name}-{label}.diff")
                code = fix_copy(os.path.abspath(tree), root, mode, target, args.npu_mem, diff_path)
                if FIX_MODES[mode]:
                    added, removed = changed_lines(diff_path)
                    print(f"== {name} {label}: npu-mem exit {code}, diff +{added} -{removed} ({diff_path})")
                for spec in project["runs"]:
                    for host in HOSTS[mode]:
                        result = run_one(spec, root, host, project["torch"], args.python, scratch)
                        status, reasons = verdict(host, result, root)
                        if mode == "original" and host == "npu":
                            status = "reference"
                        silent = sum(e["severity"] == "silent" for e in result["events"])
                        print(f"{name:15} {label:10} {host:12} {status:9} {spec['name']}"
                              + (f" [{silent} silent]" if silent else ""))
                        for reason in reasons:
                            print(f"    {reason}")
                        results.append({"project": name, "fix": label, "host": host, "run": spec["name"],
                                        "status": status, "reasons": reasons, **result})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=1)
    baseline = [r for r in results if r["fix"] == "original" and r["host"] == "cuda" and r["status"] != "PASS"]
    if baseline:
        print(f"fixcheck: {len(baseline)} baseline run(s) failed: the stub or the driver, not the fix", file=sys.stderr)


if __name__ == "__main__":
    main()
