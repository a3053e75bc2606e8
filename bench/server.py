"""Latency and memory of `npu-mem server`, driven over stdio (bench/lsp_client.py).

For each project: open a 2,000-line Python file (the demo's four modules,
repeated), wait for its diagnostics, then make edits one at a time (a line
added at the top, which moves every diagnostic, so each edit is published)
and time each from sending `didChange` to receiving the diagnostics of that
version. CPU/edit is the server's user and system time (all threads) over
the edits, divided by their number: what an edit costs whatever else the
machine runs. Memory is the server's peak resident set (VmHWM) after the edits.

Projects: the demo with the 2,000-line file added, and 1,000 files (the
demo's five files in 200 packages) with it, both built in a temporary
directory; `--project DIR` adds a copy of a real one.

    cargo build --release
    python3 bench/server.py [--edits 40] [--project DIR]
"""

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from lsp_client import Client, uri_of  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo"


def two_thousand_lines():
    modules = [(DEMO / m).read_text() for m in ("train.py", "model.py", "utils.py", "data.py")]
    lines = []
    while len(lines) < 2000:
        for m in modules:
            lines.extend(m.splitlines(keepends=True))
    return "".join(lines[:2000])


def demo_project(dir):
    shutil.copytree(DEMO, dir)
    (dir / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    return dir


def thousand_files(dir):
    dir.mkdir()
    (dir / "pyproject.toml").write_text('[project]\nname = "many"\n')
    for i in range(200):
        package = dir / f"pkg{i:03}"
        shutil.copytree(DEMO, package)
        (package / "__init__.py").write_text("")
    return dir


def cpu_seconds(pid):
    """User and system time of the process, all its threads, so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(server, project, edits):
    big = project / "big.py"
    text = two_thousand_lines()
    big.write_text(text)
    files = sum(1 for p in project.rglob("*") if p.suffix in (".py", ".sh"))
    client = Client([server, "server"])
    started = time.perf_counter()
    client.initialize(project)
    uri = uri_of(big)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    arrived, diagnostics = client.diagnostics(uri, 1, timeout=600)
    first = arrived - started
    latencies = []
    cpu_before = cpu_seconds(client.proc.pid)
    for version in range(2, edits + 2):
        sent = time.perf_counter()
        change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# edit\n"}
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        arrived, _ = client.diagnostics(uri, version, timeout=60)
        latencies.append((arrived - sent) * 1000)
    cpu = (cpu_seconds(client.proc.pid) - cpu_before) / edits * 1000
    peak = peak_rss_mib(client.proc.pid)
    code = client.shutdown()
    assert code == 0, code
    return {
        "files": files,
        "diagnostics": len(diagnostics),
        "first": first,
        "latencies": latencies,
        "peak": peak,
        "cpu": cpu,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=str(ROOT / "target" / "release" / "npu-mem"))
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--project", help="also measure a copy of this project")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="npu-mem-server-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        projects = [("demo + 2,000-line file", demo_project(tmp / "demo")),
                    ("1,000 files + 2,000-line file", thousand_files(tmp / "many"))]
        if args.project:
            projects.append((f"{os.path.basename(args.project)} + 2,000-line file",
                             pathlib.Path(shutil.copytree(args.project, tmp / "real"))))
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"{'project':32} {'files':>6} {'first diagnostics':>18} {'edit: median':>13} {'p90':>7} {'max':>7} "
              f"{'CPU/edit':>9} {'peak RSS':>9}")
        for name, dir in projects:
            r = measure(args.server, dir, args.edits)
            lat = sorted(r["latencies"])
            p90 = lat[min(len(lat) - 1, int(0.9 * len(lat)))]
            print(f"{name:32} {r['files']:>6} {r['first']:>16.2f} s {statistics.median(lat):>10.1f} ms "
                  f"{p90:>4.1f} ms {lat[-1]:>4.1f} ms {r['cpu']:>6.1f} ms {r['peak']:>5.1f} MiB")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
