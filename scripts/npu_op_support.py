#!/usr/bin/env python3
"""Regenerate the operator-support tables under rules/data/ from the wheels themselves.

What it reads (nothing is imported, nothing runs on an NPU):

- the three torch_npu wheels (sha256 pinned in TARGETS below): the NPU kernel list
  `torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`, the strings of
  `torch_npu/lib/libtorch_npu.so`, `torch_npu/version.py`, and the shipped
  `torch_npu/include/third_party/hccl/inc/hccl/hccl_types.h`;
- the matching torch wheels (also pinned): `torchgen/packaged/ATen/native/native_functions.yaml`
  and torch's own Python sources (nn/functional.py, functional.py, _tensor.py, nn/modules,
  linalg/fft/special, distributions, _C/*.pyi);
- Huawei's API lists `op_list_2_{1,6,7,8}.json` (APIs marked unsupported) and
  `supported_op_2_{1,6,7,8}.json` (supported APIs with notes), from the public repository
  xiaobingling93-pixel/Ascend-mstt, folder msfmktransplt/src/ms_fmk_transplt/resource/;
- a git directory of the public Ascend/pytorch repository, for the HCCL data-type facts that the
  .so holds as data rather than text (`torch_npu/csrc/distributed/HCCLUtils.cpp` and
  `ProcessGroupHCCL.cpp`, read with `git show` at the commit each wheel's version.py names).

It writes, byte for byte the same on every run (rows sorted, no dates):
  aten_ops_on_npu.tsv, aten_overloads_on_npu.tsv, torch_api_ops.tsv, npu_cpu_fallbacks.tsv,
  unsupported_apis.tsv, op_dtype_limits.tsv, op_dtype_gaps.tsv, hccl_dtypes.tsv
and reads the curated decompositions in scripts/npu_op_support_overrides.tsv.

Needs Python >= 3.9 and PyYAML (the only package outside the standard library).

Fetching the inputs (about 2.1 GB of torch wheels; keep them outside the repository):

  mkdir -p /work/wheels && cd /work/wheels
  pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
      --platform manylinux2014_x86_64 torch_npu==2.1.0.post17 -d .
  pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
      --platform manylinux2014_x86_64 torch_npu==2.6.0.post5 -d .
  pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
      --platform manylinux_2_28_x86_64 torch_npu==2.14.0 -d .
  for v in 2.1.0 2.6.0 2.14.0; do
    pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
        --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 torch==$v -d .
  done
  # Huawei's lists: copy the eight JSON files named above out of a clone of Ascend-mstt into
  # /work/wheels/huawei/ (never into this repository).
  # Ascend/pytorch: any clone whose history holds the wheels' commits (a bare one is enough).

Run from the repository root:

  python3 scripts/npu_op_support.py --wheels /work/wheels --huawei /work/wheels/huawei \
      --ascend-pytorch /path/to/Ascend/pytorch.git --out rules/data
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Target:
    """One torch_npu release and the torch release its METADATA requires."""

    npu_version: str
    npu_wheel: str
    npu_sha256: str
    torch_version: str
    torch_wheel: str
    torch_sha256: str
    # Huawei list suffix for the same torch line, or None when Huawei publishes none.
    huawei: str | None


TARGETS = [
    Target(
        "2.1.0.post17",
        "torch_npu-2.1.0.post17-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "f0e57c46321fe47e18a0b05115a1e3e38d0741ab67c800ed73de3850abe01083",
        "2.1.0",
        "torch-2.1.0-cp311-cp311-manylinux1_x86_64.whl",
        "2224622407ca52611cbc5b628106fde22ed8e679031f5a99ce286629fc696128",
        "2_1",
    ),
    Target(
        "2.6.0.post5",
        "torch_npu-2.6.0.post5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "dc35b413cb90fabba9042945793ffebd2d65e530712a3fbf148833b83fa1da48",
        "2.6.0",
        "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl",
        "7979834102cd5b7a43cc64e87f2f3b14bd0e1458f06e9f88ffa386d07c7446e1",
        "2_6",
    ),
    Target(
        "2.14.0",
        "torch_npu-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "7736f7d82cf9f16c7dfc4537f7e7c638153da760273a193455e70857f912189e",
        "2.14.0",
        "torch-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "8d9e232b6376c62f3090237889fb1cb6887c0ece9f73e6c1052e80fc1481f999",
        None,
    ),
]

HUAWEI_LISTS = ["2_1", "2_6", "2_7", "2_8"]
VERSIONS = [t.npu_version for t in TARGETS]
NPU_YAML = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
NATIVE_YAML = "torchgen/packaged/ATen/native/native_functions.yaml"
SO_PATH = "torch_npu/lib/libtorch_npu.so"
OVERRIDES = Path(__file__).with_name("npu_op_support_overrides.tsv")

# APIs the issue names, listed in torch_api_ops.tsv whatever their verdict, so that the
# negatives (an NPU kernel exists) are written down too.
NAMED_APIS = {
    "torch.nn.MaxPool2d", "torch.nn.functional.max_pool2d", "torch.cdist", "torch.topk", "Tensor.topk",
    "torch.nn.functional.grid_sample", "torch.sort", "Tensor.sort", "torch.unique_consecutive",
    "Tensor.unique_consecutive", "torch.fft.fft", "torch.fft.rfft", "torch.fft.ifft", "torch.fft.irfft",
    "torch.linalg.cholesky", "torch.lgamma", "torch.digamma", "torch.heaviside", "torch.nanquantile",
    "torch.mode", "torch.cummax", "torch.kron", "torch.linalg.eigh",
    "torch.distributions.MultivariateNormal", "torch.distributions.Gamma.sample",
}


class InputError(Exception):
    """An input is missing or is not the pinned file; the message says what to do."""


# ---------------------------------------------------------------- reading inputs


def sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks (the torch wheels are ~700 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def open_wheel(directory: Path, name: str, expected: str) -> zipfile.ZipFile:
    """Opens a pinned wheel after checking its sha256."""
    path = directory / name
    if not path.is_file():
        raise InputError(f"{path} is missing: fetch it with the pip commands in this script's docstring")
    got = sha256(path)
    if got != expected:
        raise InputError(f"{path} has sha256 {got}, expected {expected}: download the pinned wheel again")
    return zipfile.ZipFile(path)


def printable_strings(blob: bytes) -> set[str]:
    """What `strings -n 3` would print for a binary: runs of 3+ printable ASCII bytes (registration names as short as `any`)."""
    return {m.group().decode("ascii") for m in re.finditer(rb"[\x20-\x7e]{3,}", blob)}


@dataclass
class Wheels:
    """Everything read from one target's pair of wheels."""

    target: Target
    npu_yaml: dict
    native: list
    so_strings: set[str]
    git_version: str
    torch_zip: zipfile.ZipFile
    hccl_types_h: str

    def holds(self, text: str) -> bool:
        """Whether libtorch_npu.so holds a NUL-terminated string `text`.

        The linker merges a string literal into the tail of a longer one that ends the same way
        (`_cdist_forward` inside `wrapper_NPU___cdist_forward`), so tails count too.
        """
        return text in self.so_strings or any(s.endswith(text) for s in self.so_strings)

    def torch_source(self, member: str) -> str | None:
        """A text file of the torch wheel, or None when this torch version lacks it."""
        try:
            return self.torch_zip.read(member).decode("utf-8")
        except KeyError:
            return None

    def torch_members(self, prefix: str) -> list[str]:
        """Names of the torch wheel's files under a folder, sorted."""
        return sorted(n for n in self.torch_zip.namelist() if n.startswith(prefix))


def load_wheels(directory: Path, target: Target) -> Wheels:
    """Reads one target's inputs out of its two wheels."""
    npu = open_wheel(directory, target.npu_wheel, target.npu_sha256)
    torch = open_wheel(directory, target.torch_wheel, target.torch_sha256)
    version_py = npu.read("torch_npu/version.py").decode("utf-8")
    match = re.search(r"git_version = '([0-9a-f]{40})'", version_py)
    if not match:
        raise InputError(f"{target.npu_wheel}: torch_npu/version.py names no git_version")
    return Wheels(
        target=target,
        npu_yaml=yaml.safe_load(npu.read(NPU_YAML)),
        native=yaml.safe_load(torch.read(NATIVE_YAML)),
        so_strings=printable_strings(npu.read(SO_PATH)),
        git_version=match.group(1),
        torch_zip=torch,
        hccl_types_h=npu.read("torch_npu/include/third_party/hccl/inc/hccl/hccl_types.h").decode("utf-8"),
    )


def load_huawei(directory: Path) -> dict[str, tuple[dict, dict]]:
    """Huawei's (unsupported, supported) API maps per list suffix."""
    lists = {}
    for suffix in HUAWEI_LISTS:
        pair = []
        for stem in ("op_list", "supported_op"):
            path = directory / f"{stem}_{suffix}.json"
            if not path.is_file():
                raise InputError(f"{path} is missing: copy it from Ascend-mstt (see this script's docstring)")
            pair.append(json.loads(path.read_text(encoding="utf-8"))["op_list"])
        lists[suffix] = (pair[0], pair[1])
    return lists


# ---------------------------------------------------------------- table a: aten operators


def overload_name(func: str) -> str:
    """`add.Tensor(Tensor self, ...) -> Tensor` -> `add.Tensor`."""
    return func.split("(", 1)[0].strip()


def base_name(overload: str) -> str:
    """`add.Tensor` -> `add`."""
    return overload.split(".", 1)[0]


def is_out_variant(func: str) -> bool:
    """True for an out= overload: a keyword-only argument is a mutable Tensor."""
    args = func.split("(", 1)[1].rsplit(") ->", 1)[0]
    return "*" in args and bool(re.search(r"\*.*Tensor\(\w!\)", args))


DENSE_KEYS = {"CPU", "CUDA", "MPS", "Meta", "XPU", "MTIA", "HIP"}


def torch_category(entry: dict) -> str:
    """Which kernel a dense NPU (PrivateUse1) tensor reaches when torch_npu registers none.

    Follows OperatorEntry::computeDispatchTableEntryWithDebug (aten/src/ATen/core/dispatch/
    OperatorEntry.cpp): a direct registration wins, then CompositeExplicitAutogradNonFunctional,
    then CompositeExplicitAutograd (both cover every backend key, PrivateUse1 included), then
    CompositeImplicitAutograd, and only then the backend fallback (torch_npu's CPU fallback).
    """
    dispatch = entry.get("dispatch")
    if not dispatch:
        # No dispatch section: a structured functional/inplace variant gets its kernels from its
        # out= variant (backend kernels); anything else is implicitly CompositeImplicitAutograd.
        return "backend" if "structured_delegate" in entry else "implicit"
    keys = {k.strip() for spec in dispatch for k in spec.split(",")}
    if keys & {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}:
        return "composite"
    if "CompositeImplicitAutograd" in keys:
        return "implicit"
    if keys & DENSE_KEYS or "structured_delegate" in entry:
        return "backend"
    return "nondense"


def npu_registered(wheels: Wheels) -> set[str]:
    """Overload names torch_npu registers a kernel for: yaml sections supported, symint, autograd."""
    names = set()
    for section in ("supported", "symint", "autograd"):
        for item in wheels.npu_yaml.get(section) or []:
            func = item if isinstance(item, str) else item["func"]
            names.add(overload_name(func))
    return names


# The wheel's own "will fallback to run on the CPU" messages name registered kernels that run
# their computation on the host under conditions checked at run time (SoC, CANN version, args).
CPU_MESSAGE = re.compile(r"CAUTION: The operator '?(aten::[^']*?)'? (?:is currently not|is not currently|need to be met)")


def kernels_with_cpu_path(wheels: Wheels) -> set[str]:
    """Base names of aten operators whose NPU kernel has a CPU path announced in the .so."""
    names = set()
    for text in wheels.so_strings:
        if "fall" not in text or "CPU" not in text:
            continue
        match = CPU_MESSAGE.search(text)
        if match:
            names.update(base_name(n) for n in re.findall(r"aten::([\w.]+)", match.group(1)))
    return names


def structured_without_string(wheels: Wheels) -> set[str]:
    """Functional/in-place overloads whose structured out= kernel torch_npu registers but whose own
    registration name is not in the .so: counted as fallback, the least certain verdicts."""
    registered = npu_registered(wheels)
    return {overload_name(e["func"]) for e in wheels.native
            if e.get("structured_delegate") in registered and overload_name(e["func"]) not in registered
            and overload_name(e["func"]) not in wheels.so_strings}


@dataclass
class OverloadFacts:
    """Per overload, per target: torch's category and the NPU verdict."""

    func: dict[str, str] = field(default_factory=dict)  # version -> schema
    verdict: dict[str, str] = field(default_factory=dict)  # version -> verdict


def overload_verdicts(all_wheels: list[Wheels]) -> dict[str, OverloadFacts]:
    """The verdict of every aten overload at every target.

    kernel: torch_npu registers an NPU kernel (or, for _foreach_*, torch's per-tensor loop,
    registered on PrivateUse1 by torch_npu's generated ForeachRegister.cpp); composite: torch's
    CompositeExplicitAutograd(NonFunctional) kernel runs and calls other operators; fallback: the
    CPU fallback; implicit: CompositeImplicitAutograd (decomposes before any backend is chosen);
    nondense: only sparse/quantized/nested/mkldnn kernels exist.
    """
    facts: dict[str, OverloadFacts] = {}
    for wheels in all_wheels:
        version = wheels.target.npu_version
        registered = npu_registered(wheels)
        # A structured group whose out= kernel torch_npu registers gets functional/in-place wrappers
        # from torch_npu's codegen; the registration name is then a string of the .so (`argmax`).
        registered |= {overload_name(e["func"]) for e in wheels.native
                       if e.get("structured_delegate") in registered and overload_name(e["func"]) in wheels.so_strings}
        for entry in wheels.native:
            name = overload_name(entry["func"])
            category = torch_category(entry)
            cpu_keys = {k.strip() for spec in entry.get("dispatch") or {} for k in spec.split(",")}
            if name in registered:
                verdict = "kernel"
            elif name.startswith("_foreach_") and "CPU" in cpu_keys and wheels.holds(name):
                verdict = "kernel"
            elif category == "backend":
                verdict = "fallback"
            else:
                verdict = category
            slot = facts.setdefault(name, OverloadFacts())
            slot.func[version] = entry["func"]
            slot.verdict[version] = verdict
    return facts


def name_verdict(overloads: list[tuple[str, str]]) -> str:
    """One base name's verdict at one target from its overloads' (schema, verdict) pairs."""
    if not overloads:
        return "-"
    relevant = [(f, v) for f, v in overloads if v in ("kernel", "fallback", "composite")]
    if not relevant:
        return "implicit" if any(v == "implicit" for _, v in overloads) else "nondense"
    verdicts = {v for _, v in relevant}
    if verdicts == {"kernel"}:
        return "kernel"
    if "kernel" not in verdicts:
        return "fallback" if "fallback" in verdicts else "composite"
    # Mixed: what training code calls (functional and in-place overloads) decides: partial when one
    # of them falls back; out= overloads that fall back are listed in aten_overloads_on_npu.tsv.
    calls = [v for f, v in relevant if not is_out_variant(f)]
    return "partial" if "fallback" in calls or not calls else "kernel"


def aten_names(facts: dict[str, OverloadFacts]) -> dict[str, dict[str, str]]:
    """Base name -> version -> verdict, for names that need a backend kernel at some target."""
    grouped: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for name, slot in facts.items():
        for version, verdict in slot.verdict.items():
            grouped.setdefault(base_name(name), {}).setdefault(version, []).append((slot.func[version], verdict))
    table = {}
    for base, per_version in grouped.items():
        row = {v: name_verdict(per_version.get(v, [])) for v in VERSIONS}
        if any(cell in ("kernel", "fallback", "composite", "partial") for cell in row.values()):
            table[base] = row
    return table


# ---------------------------------------------------------------- table b: Python APIs

# Attribute chains whose last part is an aten operator name as written.
OP_NAMESPACES = (
    "torch._C._nn.", "torch._C._VariableFunctions.", "_VF.", "torch._VF.", "torch._C._fft.", "_fft.",
    "torch._C._linalg.", "_linalg.", "torch._C._special.", "_special.", "torch.ops.aten.",
)
# torch.<sub>.X calls aten <prefix>X.
SUBMODULE_PREFIX = {"torch.linalg.": "linalg_", "torch.fft.": "fft_", "torch.special.": "special_"}
SKIP_RECEIVERS = {"torch", "F", "math", "np", "numpy", "warnings", "self", "cls", "super", "builtins"}


def dotted(node: ast.AST) -> str | None:
    """`torch._C._nn.foo` for an Attribute chain over a Name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


@dataclass
class Module:
    """One parsed torch Python file: its top-level functions and classes by name."""

    functions: dict[str, ast.AST]
    classes: dict[str, ast.ClassDef]
    assigned: dict[str, ast.AST]


def parse_module(text: str | None) -> Module:
    """Top-level defs, classes and `name = <call>` assignments of a source file."""
    functions, classes, assigned = {}, {}, {}
    if text is not None:
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                classes[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned[node.targets[0].id] = node.value
    return Module(functions, classes, assigned)


class CallReader:
    """Collects the aten operators a piece of torch's Python code calls, following helpers.

    Reads calls of the forms torch.X, torch._C._nn.X, _VF.X, torch.linalg.X (-> linalg_X),
    F.X / torch.nn.functional.X (followed into nn/functional.py), helper functions of the same
    file (followed), torch/functional.py's Python functions (followed), and method calls
    `<tensor>.X(...)` (X taken as a Tensor method). Only names that are aten operators are kept.
    """

    def __init__(self, wheels: Wheels, op_names: set[str]):
        self.ops = op_names
        self.functional = parse_module(wheels.torch_source("torch/nn/functional.py"))
        self.torch_functional = parse_module(wheels.torch_source("torch/functional.py"))
        # Keyed by the node itself (AST nodes hash by identity), which keeps it alive: an id() key
        # could be reused by a node of a module parsed later, once the first is freed, and hand
        # that node another function's operators (the output then depended on memory layout).
        self.memo: dict[ast.AST, frozenset[str]] = {}

    def of(self, node: ast.AST, module: Module) -> frozenset[str]:
        """Operators reached from a function, class body or expression."""
        key = node
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = frozenset()  # recursion guard
        found: set[str] = set()
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            found |= self.call_target(call.func, module)
            if dotted(call.func) in ("boolean_dispatch", "_add_docstr"):
                for arg in list(call.args) + [k.value for k in call.keywords]:
                    found |= self.reference(arg, module)
        result = frozenset(found)
        self.memo[key] = result
        return result

    def reference(self, node: ast.AST, module: Module) -> set[str]:
        """Operators behind a function named without being called (boolean_dispatch, _add_docstr)."""
        name = dotted(node)
        if name is None:
            return set()
        if isinstance(node, ast.Name) and node.id in module.functions:
            return set(self.of(module.functions[node.id], module))
        if isinstance(node, ast.Name) and node.id in module.assigned:  # nested boolean_dispatch
            return set(self.of(module.assigned[node.id], module))
        return self.call_target(node, module)

    def call_target(self, func: ast.AST, module: Module) -> set[str]:
        """Operators one call expression reaches."""
        name = dotted(func)
        if name is None:
            if isinstance(func, ast.Attribute) and func.attr in self.ops:
                return {func.attr}  # method call on an expression, e.g. (a - b).pow(2)
            return set()
        if "." not in name:
            if name in module.functions:
                return set(self.of(module.functions[name], module))
            return set()
        for prefix in OP_NAMESPACES:
            if name.startswith(prefix):
                return {name[len(prefix):]} & self.ops
        for prefix, op_prefix in SUBMODULE_PREFIX.items():
            if name.startswith(prefix):
                return {op_prefix + name[len(prefix):]} & self.ops
        for prefix in ("F.", "torch.nn.functional.", "nn.functional."):
            if name.startswith(prefix):
                return self.functional_api(name[len(prefix):])
        if name.startswith("torch.") and name.count(".") == 1:
            return self.torch_api(name[len("torch."):])
        receiver, _, attr = name.rpartition(".")
        if receiver.split(".")[0] not in SKIP_RECEIVERS and attr in self.ops:
            return {attr}
        return set()

    def functional_api(self, name: str) -> set[str]:
        """Operators of torch.nn.functional.<name>."""
        if name in self.functional.functions:
            return set(self.of(self.functional.functions[name], self.functional))
        if name in self.functional.assigned:
            return set(self.of(self.functional.assigned[name], self.functional))
        return set()

    def torch_api(self, name: str) -> set[str]:
        """Operators of torch.<name>: a Python function of torch/functional.py, or the aten op itself."""
        if name in self.torch_functional.functions:
            return set(self.of(self.torch_functional.functions[name], self.torch_functional))
        if name in self.torch_functional.assigned:
            return set(self.of(self.torch_functional.assigned[name], self.torch_functional))
        return {name} & self.ops


def class_method_ops(reader: CallReader, classes: dict[str, tuple[ast.ClassDef, Module]], cls: str,
                     method: str, origin: str | None = None) -> frozenset[str] | None:
    """Operators of cls.method, looking up base classes of the same package; None if undefined.

    `self.helper(...)` calls are looked up from `origin` (the class the API names), as Python does.
    """
    origin = origin or cls
    seen = set()
    while cls in classes and cls not in seen:
        seen.add(cls)
        node, module = classes[cls]
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == method:
                found = set(reader.of(item, module))
                # Calls of self.<helper>(...) inside the method: follow the class's own helpers.
                for call in (n for n in ast.walk(item) if isinstance(n, ast.Call)):
                    target = dotted(call.func)
                    if target and target.startswith("self.") and target.count(".") == 1 and target[5:] != method:
                        helper = class_method_ops(reader, classes, origin, target[5:])
                        found |= helper or set()
                return frozenset(found)
        bases = [dotted(b) for b in node.bases]
        cls = next((b.rsplit(".", 1)[-1] for b in bases if b and b.rsplit(".", 1)[-1] in classes), "")
    return None


def pyi_functions(text: str | None, class_name: str | None = None) -> set[str]:
    """Names `def X(` at top level (class_name None) or inside one class of a .pyi stub."""
    if text is None:
        return set()
    tree = ast.parse(text)
    body = tree.body
    if class_name is not None:
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), [])
    return {n.name for n in body if isinstance(n, ast.FunctionDef)}


DISTRIBUTION_METHODS = ("__init__", "sample", "rsample", "log_prob")


def derive_apis(wheels: Wheels, op_names: set[str]) -> dict[tuple[str, str], tuple[frozenset[str], str]]:
    """(api, kind) -> (aten operators it calls, where that was read) for one target."""
    reader = CallReader(wheels, op_names)
    apis: dict[tuple[str, str], tuple[frozenset[str], str]] = {}

    variable_functions = pyi_functions(wheels.torch_source("torch/_C/_VariableFunctions.pyi"))
    for name in sorted(variable_functions & op_names):
        apis[(f"torch.{name}", "function")] = (frozenset({name}), "same name (torch/_C/_VariableFunctions.pyi)")
    for name in sorted(set(reader.torch_functional.functions) | set(reader.torch_functional.assigned)):
        if not name.startswith("_"):
            found = reader.torch_api(name)
            if found:
                apis[(f"torch.{name}", "function")] = (frozenset(found), "torch/functional.py")

    stub = wheels.torch_source("torch/_C/__init__.pyi")
    methods = pyi_functions(stub, "TensorBase") | pyi_functions(stub, "_TensorBase")
    for name in sorted(methods & op_names):
        apis[(f"Tensor.{name}", "method")] = (frozenset({name}), "same name (torch/_C/__init__.pyi)")
    tensor_py = parse_module(wheels.torch_source("torch/_tensor.py"))
    if "Tensor" in tensor_py.classes:
        for item in tensor_py.classes["Tensor"].body:
            if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                found = reader.of(item, tensor_py)
                if found:
                    apis[(f"Tensor.{item.name}", "method")] = (found, "torch/_tensor.py")

    for name in sorted(set(reader.functional.functions) | set(reader.functional.assigned)):
        if not name.startswith("_"):
            found = reader.functional_api(name)
            if found:
                apis[(f"torch.nn.functional.{name}", "function")] = (frozenset(found), "torch/nn/functional.py")

    for sub, op_prefix in (("linalg", "linalg_"), ("fft", "fft_"), ("special", "special_")):
        module = parse_module(wheels.torch_source(f"torch/{sub}/__init__.py"))
        for name, value in sorted(module.assigned.items()):
            if isinstance(value, ast.Call) and dotted(value.func) == "_add_docstr" and value.args:
                target = dotted(value.args[0]) or ""
                op = target.rsplit(".", 1)[-1]
                if op.startswith(op_prefix) and op in op_names:
                    apis[(f"torch.{sub}.{name}", "function")] = (frozenset({op}), f"torch/{sub}/__init__.py")

    nn_init = parse_module(wheels.torch_source("torch/nn/modules/__init__.py"))
    exported = set()
    all_value = nn_init.assigned.get("__all__")
    if isinstance(all_value, (ast.List, ast.Tuple)):
        exported = {e.value for e in all_value.elts if isinstance(e, ast.Constant)}
    for member in wheels.torch_members("torch/nn/modules/"):
        if not member.endswith(".py"):
            continue
        module = parse_module(wheels.torch_source(member))
        classes = {n: (c, module) for n, c in module.classes.items()}
        for name in sorted(exported & set(module.classes)):
            found = class_method_ops(reader, classes, name, "forward")
            if found:
                apis[(f"torch.nn.{name}", "module")] = (found, f"{member} ({name}.forward)")

    dist_classes: dict[str, tuple[ast.ClassDef, Module]] = {}
    for member in wheels.torch_members("torch/distributions/"):
        if member.endswith(".py"):
            module = parse_module(wheels.torch_source(member))
            dist_classes.update({n: (c, module) for n, c in module.classes.items()})
    dist_init = parse_module(wheels.torch_source("torch/distributions/__init__.py"))
    all_value = dist_init.assigned.get("__all__")
    exported = {e.value for e in all_value.elts if isinstance(e, ast.Constant)} if all_value else set()
    for name in sorted(exported & set(dist_classes)):
        for method in DISTRIBUTION_METHODS:
            found = class_method_ops(reader, dist_classes, name, method)
            if found:
                api = f"torch.distributions.{name}" + ("" if method == "__init__" else f".{method}")
                apis[(api, "distribution")] = (found, f"torch/distributions ({name}.{method})")
    return apis


@dataclass(frozen=True)
class Override:
    """A curated decomposition: an API or an implicit aten op and the operators it reaches."""

    key: str
    kind: str
    ops: tuple[str, ...]
    source: str


def load_overrides(path: Path) -> list[Override]:
    """Rows of scripts/npu_op_support_overrides.tsv (key, kind, ops, source)."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 4:
            raise InputError(f"{path}:{number}: expected 4 tab-separated cells, found {len(cells)}")
        if cells[0] == "key":
            continue
        rows.append(Override(cells[0], cells[1], tuple(cells[2].split()), cells[3]))
    return rows


SEVERITY = {"fallback": 4, "partial": 3, "composite": 1, "kernel": 0}


def resolve(ops: frozenset[str], column: dict[str, str], expand: dict[str, tuple[str, ...]]) -> tuple[set, set]:
    """(operators that decide, implicit operators left unexpanded) after curated expansions."""
    decided, unresolved, todo, seen = set(), set(), list(ops), set()
    while todo:
        op = todo.pop()
        if op in seen:
            continue
        seen.add(op)
        verdict = column.get(op, "implicit")
        if op in expand and verdict in ("implicit", "composite"):
            todo.extend(expand[op])
        elif verdict in SEVERITY:
            decided.add(op)
        elif verdict == "implicit":
            unresolved.add(op)
    return decided, unresolved


def api_verdict(decided: set[str], column: dict[str, str]) -> str:
    """kernel / composite / fallback / partial over the deciding operators of one API."""
    if not decided:
        return "implicit"
    verdicts = {column[op] for op in decided}
    if verdicts <= {"kernel", "composite"}:
        return "composite" if verdicts == {"composite"} else "kernel"
    if verdicts <= {"fallback"}:
        return "fallback"
    return "partial"


# ---------------------------------------------------------------- Huawei lists

DTYPE_TOKENS = [
    "bf16", "fp16", "fp32", "fp64", "uint8", "int8", "int16", "int32", "int64", "bool", "complex32",
    "complex64", "complex128", "uint16", "uint32", "uint64", "hf32", "double",
]
PRODUCTS = [("Atlas A2 训练系列产品", "A2"), ("Atlas A3 训练系列产品", "A3"), ("Atlas 训练系列产品", "Atlas-training"),
            ("Atlas 推理系列产品", "Atlas-inference")]
# Recognised notes, turned into short English tags (facts only; Huawei's prose is not copied).
NOTE_TAGS = [
    ("可能回退至CPU", "may-fall-back-to-cpu"),
    ("仅支持推理场景", "inference-only"),
    ("仅CPU支持", "cpu-only"),
    ("不支持double", "no-float64"),
    ("不支持稀疏", "no-sparse"),
    ("依赖稀疏", "needs-sparse"),
    ("不支持jit_compile=True", "no-jit-compile"),
    ("不支持标量tensor", "no-scalar-tensor"),
    ("不支持dtype参数", "no-dtype-arg"),
    ("不支持scale_factors", "no-scale-factors"),
    ("不支持proj_size", "no-proj-size"),
    ("不支持dropout参数", "no-dropout-arg"),
    ("仅支持设置为tanh", "approximate-tanh-only"),
    ("只支持mode = nearest", "nearest-only"),
    ("当前target不支持求导", "no-grad-for-target"),
    ("入参target不支持反向", "no-grad-for-target"),
    ("不支持NPU融合优化器", "no-npu-fused-optimizer"),
    ("默认返回fp32", "float64-returned-as-float32"),
]


def dtype_sets(note: str) -> str:
    """The dtype lists of a supported_op note, `A2:bf16,fp16;Atlas-training:fp16` style, or ''."""
    parts = []
    for segment in re.split(r"<br>|\n", note):
        segment = segment.replace("<term>", "").replace("</term>", "")
        scope = "/".join(tag for text, tag in PRODUCTS if text in segment.split("：")[0]) if "：" in segment else ""
        body = segment.split("：", 1)[1] if "：" in segment else segment
        match = re.match(r"\s*-?\s*(?:input)?支持([a-z0-9，、, ]+)$", body)
        if not match:
            continue
        tokens = [t for t in re.split(r"[，、, ]+", match.group(1)) if t]
        if tokens and all(t in DTYPE_TOKENS for t in tokens):
            parts.append((scope + ":" if scope else "") + ",".join(tokens))
    return ";".join(parts)


def note_tags(note: str) -> list[str]:
    """English tags for the notes of a supported_op entry."""
    return [tag for text, tag in NOTE_TAGS if text in note]


# ---------------------------------------------------------------- HCCL


def git_show(git_dir: Path, commit: str, path: str) -> str:
    """A file of Ascend/pytorch at a commit."""
    run = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True,
                         text=True, check=False)
    if run.returncode != 0:
        raise InputError(f"git show {commit}:{path} in {git_dir} failed: {run.stderr.strip()}")
    return run.stdout


def hccl_commit(git_dir: Path, wheels: Wheels) -> tuple[str, bool]:
    """(commit to read, whether it is the wheel's own git_version); master when the wheel's is absent."""
    run = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", wheels.git_version + "^{commit}"],
                         capture_output=True, check=False)
    if run.returncode == 0:
        return wheels.git_version, True
    head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "master"], capture_output=True, text=True,
                          check=False)
    if head.returncode != 0:
        raise InputError(f"{git_dir} has neither {wheels.git_version} nor a master branch")
    return head.stdout.strip(), False


TORCH_DTYPE = {
    "kByte": "uint8", "kChar": "int8", "kShort": "int16", "kInt": "int32", "kLong": "int64", "kHalf": "float16",
    "kFloat": "float32", "kDouble": "float64", "kBool": "bool", "kBFloat16": "bfloat16",
    "ScalarType::UInt16": "uint16", "ScalarType::UInt32": "uint32", "ScalarType::UInt64": "uint64",
    "ScalarType::Float8_e4m3fn": "float8_e4m3fn", "ScalarType::Float8_e5m2": "float8_e5m2",
}
HCCL_SHORT = {
    "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16",
    "UINT32": "uint32", "UINT64": "uint64", "FP16": "float16", "FP32": "float32", "FP64": "float64",
    "BFP16": "bfloat16", "FP8E4M3": "float8_e4m3fn", "FP8E5M2": "float8_e5m2", "INT128": "int128",
    "HIF8": "hifloat8",
}


def hccl_facts(source_utils: str, source_pg: str) -> dict[str, str]:
    """key -> cell for one version, read from HCCLUtils.cpp and ProcessGroupHCCL.cpp."""
    facts = {}
    table = re.search(r"kScalarTypeToHcclDataType = \{(.*?)\};", source_utils, re.S)
    mapped = re.findall(r"\{at::(k\w+|ScalarType::\w+), HCCL_DATA_TYPE_(\w+)\}", table.group(1) if table else "")
    for torch_name, hccl in mapped:
        dtype = TORCH_DTYPE.get(torch_name, torch_name)
        facts[f"dtype:torch.{dtype}"] = "HCCL_DATA_TYPE_" + hccl
    reduce_set = re.search(r"checkSupportedDataType\(HcclDataType type.*?supportedDataTypes = \{(.*?)\};", source_pg,
                           re.S)
    reduce_types = [HCCL_SHORT.get(t, t) for t in re.findall(r"HCCL_DATA_TYPE_(\w+)", reduce_set.group(1))] \
        if reduce_set else []
    extra = re.search(r"a5ExtraDataTypes = \{(.*?)\};", source_pg, re.S)
    extra_types = [HCCL_SHORT.get(t, t) for t in re.findall(r"HCCL_DATA_TYPE_(\w+)", extra.group(1))] if extra else []
    all_types = sorted({TORCH_DTYPE.get(t, t) for t, _ in mapped})
    reduce_cell = " ".join(sorted(reduce_types)) + (f" (+{' '.join(sorted(extra_types))} on A5)" if extra_types else "")
    defs = [(m.start(), m.group(1)) for m in
            re.finditer(r"^c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::(\w+)\(", source_pg, re.M)]
    for index, (start, name) in enumerate(defs):
        end = defs[index + 1][0] if index + 1 < len(defs) else len(source_pg)
        body = source_pg[start:end]
        if name in ("collective", "collectiveCoalesced", "pointToPoint") or name.endswith("_inner"):
            continue
        key = f"collective:{name}"
        if re.search(r"does not support \w+", body) and len(body) < 600:
            facts[key] = "raises"
        elif "checkSupportedDataType" in body:
            facts[key] = reduce_cell
        else:
            facts.setdefault(key, "any mapped: " + " ".join(all_types))
    for op in re.findall(r"\{c10d::ReduceOp::(\w+), \"\w+\"\}", source_pg):
        facts[f"reduce_op:{op}"] = "raises"
    for op in re.findall(r"\{c10d::ReduceOp::(\w+), HCCL_REDUCE_\w+\}", source_pg):
        facts[f"reduce_op:{op}"] = "native"
    if "ReduceOp::AVG" in source_pg:
        facts["reduce_op:AVG"] = "sum then divide"
    return facts


# ---------------------------------------------------------------- writing


def write_tsv(path: Path, comments: list[str], header: list[str], rows: list[list[str]]) -> int:
    """Writes a table in the rules/data style; returns its row count."""
    lines = [f"# {c}" if c else "#" for c in comments]
    lines.append("\t".join(header))
    for row in rows:
        cells = [c.replace("\t", " ").replace("\n", " ") or "-" for c in row]
        lines.append("\t".join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(rows)


def wheel_comments() -> list[str]:
    """The header lines naming the wheels and their sha256."""
    lines = []
    for t in TARGETS:
        lines.append(f"wheel {t.npu_version}: {t.npu_wheel} sha256 {t.npu_sha256}")
        lines.append(f"  with {t.torch_wheel} sha256 {t.torch_sha256}")
    return lines


def main(argv: list[str]) -> int:
    """Reads the inputs, writes the tables, prints their sizes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder holding the six pinned wheels")
    parser.add_argument("--huawei", type=Path, required=True, help="folder holding op_list_*.json, supported_op_*.json")
    parser.add_argument("--ascend-pytorch", type=Path, required=True, help="git dir of Ascend/pytorch")
    parser.add_argument("--out", type=Path, default=Path("rules/data"), help="where the tables go")
    args = parser.parse_args(argv)
    try:
        all_wheels = [load_wheels(args.wheels, t) for t in TARGETS]
        huawei = load_huawei(args.huawei)
        overrides = load_overrides(OVERRIDES)
        sizes = write_tables(args, all_wheels, huawei, overrides)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for name, count in sizes.items():
        print(f"{name}: {count} rows")
    return 0


def write_tables(args, all_wheels, huawei, overrides) -> dict[str, int]:
    """Computes and writes every table; returns row counts by file name."""
    sizes = {}
    facts = overload_verdicts(all_wheels)
    names = aten_names(facts)
    cpu_paths = {w.target.npu_version: kernels_with_cpu_path(w) for w in all_wheels}
    for w in all_wheels:
        missing = sorted(n for n in npu_registered(w) if n in facts and not w.holds(n))
        if missing:
            raise InputError(f"{w.target.npu_wheel}: yaml names {missing[:5]} that libtorch_npu.so does not hold")

    delegated = {v: structured_without_string(w) for v, w in zip(VERSIONS, all_wheels)}
    rows = []
    for base in sorted(names):
        note = [f"{v}: CPU path inside the NPU kernel (run-time condition)" for v in VERSIONS
                if base in cpu_paths[v] and names[base][v] == "kernel"]
        for v in VERSIONS:
            unsure = sorted(n for n in delegated[v] if base_name(n) == base)
            if unsure and names[base][v] in ("partial", "fallback"):
                note.append(f"{v}: {' '.join(unsure)} counted as fallback: its out= kernel is registered but its "
                            "own registration name is no string of the .so")
        rows.append([base] + [names[base][v] for v in VERSIONS] + ["; ".join(note)])
    sizes["aten_ops_on_npu.tsv"] = write_tsv(args.out / "aten_ops_on_npu.tsv", ATEN_COMMENTS + wheel_comments(),
                                             ["op"] + VERSIONS + ["note"], rows)

    rows = []
    for name in sorted(facts):
        slot = facts[name]
        if base_name(name) in names:
            rows.append([name] + [slot.verdict.get(v, "-") for v in VERSIONS])
    sizes["aten_overloads_on_npu.tsv"] = write_tsv(args.out / "aten_overloads_on_npu.tsv",
                                                   OVERLOAD_COMMENTS + wheel_comments(), ["overload"] + VERSIONS, rows)

    api_rows, api_verdicts, api_fallbacks = api_table(all_wheels, facts, names, overrides)
    sizes["torch_api_ops.tsv"] = write_tsv(args.out / "torch_api_ops.tsv", API_COMMENTS + wheel_comments(),
                                           ["api", "kind", "ops"] + VERSIONS + ["fallback_ops", "source"], api_rows)
    sizes["npu_cpu_fallbacks.tsv"] = write_tsv(args.out / "npu_cpu_fallbacks.tsv",
                                               FALLBACK_COMMENTS + wheel_comments(), ["api"] + VERSIONS + ["left_out"],
                                               certain_fallback_rows(api_fallbacks, names, facts, delegated))

    sizes["unsupported_apis.tsv"] = write_tsv(args.out / "unsupported_apis.tsv", UNSUPPORTED_COMMENTS + wheel_comments(),
                                              ["api"] + [f"list_{s}" for s in HUAWEI_LISTS] + VERSIONS +
                                              ["wheel_contradicts", "facts"],
                                              unsupported_rows(huawei, api_verdicts))
    limits = dtype_rows(huawei)
    sizes["op_dtype_limits.tsv"] = write_tsv(args.out / "op_dtype_limits.tsv", DTYPE_COMMENTS,
                                             ["api"] + [f"list_{s}" for s in HUAWEI_LISTS[1:]] +
                                             ["lacks_in_list_2_8", "tags"], limits)
    sizes["op_dtype_gaps.tsv"] = write_tsv(args.out / "op_dtype_gaps.tsv", GAP_COMMENTS, ["api", "left_out"],
                                           dtype_gap_rows(limits))

    per_version = {}
    commits = []
    for w in all_wheels:
        commit, exact = hccl_commit(args.ascend_pytorch, w)
        utils = git_show(args.ascend_pytorch, commit, "torch_npu/csrc/distributed/HCCLUtils.cpp")
        pg = git_show(args.ascend_pytorch, commit, "torch_npu/csrc/distributed/ProcessGroupHCCL.cpp")
        per_version[w.target.npu_version] = hccl_facts(utils, pg)
        enum = sorted(HCCL_SHORT.get(t, t) for t in re.findall(r"HCCL_DATA_TYPE_(\w+)\s*=", w.hccl_types_h)
                      if t != "RESERVED")
        per_version[w.target.npu_version]["hccl_types.h:HcclDataType"] = " ".join(enum)
        commits.append(f"{w.target.npu_version}: Ascend/pytorch@{commit}"
                       + (" (the wheel's version.py git_version)" if exact else
                          f" (master: the wheel's git_version {w.git_version} is not public)"))
    keys = sorted(set().union(*per_version.values()))
    rows = [[k, k.split(":", 1)[0]] + [per_version[v].get(k, "-") for v in VERSIONS] for k in keys]
    sizes["hccl_dtypes.tsv"] = write_tsv(args.out / "hccl_dtypes.tsv", HCCL_COMMENTS + commits + wheel_comments(),
                                         ["key", "kind"] + VERSIONS, rows)
    return sizes


def api_table(all_wheels, facts, names, overrides):
    """Rows of torch_api_ops.tsv and every derived API's verdicts (for unsupported_apis.tsv)."""
    expand = {o.key[len("aten:"):]: o.ops for o in overrides if o.key.startswith("aten:")}
    columns = {v: {n: row[v] for n, row in names.items()} for v in VERSIONS}
    for v in VERSIONS:  # implicit-only names are absent from `names`
        for name, slot in facts.items():
            columns[v].setdefault(base_name(name), "implicit" if v in slot.verdict else "-")
    derived: dict[tuple[str, str], dict[str, tuple[frozenset, str]]] = {}
    for w in all_wheels:
        op_names = {base_name(n) for n, s in facts.items() if w.target.npu_version in s.verdict}
        for key, value in derive_apis(w, op_names).items():
            derived.setdefault(key, {})[w.target.npu_version] = value
    for o in overrides:
        if not o.key.startswith("aten:"):
            for v in VERSIONS:
                derived.setdefault((o.key, o.kind), {})[v] = (frozenset(o.ops), o.source)
    rows, verdicts, fallbacks = [], {}, {}
    for (api, kind), per_version in sorted(derived.items()):
        cells, fallback_ops, all_ops, sources = [], [], set(), set()
        bad_at: dict[str, list[str]] = {}
        for v in VERSIONS:
            if v not in per_version:
                cells.append("-")
                continue
            ops, source = per_version[v]
            decided, _ = resolve(ops, columns[v], expand)
            verdict = api_verdict(decided, columns[v])
            cells.append(verdict)
            all_ops |= decided
            sources.add(source)
            bad = sorted(op for op in decided if columns[v][op] in ("fallback", "partial"))
            if bad:
                fallback_ops.append(f"{v}: {' '.join(bad)}")
                bad_at[v] = bad
        verdicts[api] = cells
        if any(part.startswith("_") for part in api.split(".")):
            continue  # private names: not what training code calls
        if all(c in ("kernel", "composite", "implicit", "-") for c in cells) and api not in NAMED_APIS:
            continue
        if all(c == "implicit" for c in cells if c != "-"):
            continue
        rows.append([api, kind, " ".join(sorted(all_ops))] + cells + ["; ".join(fallback_ops), "; ".join(sorted(sources))])
        if bad_at:
            fallbacks[api] = bad_at
    return rows, verdicts, fallbacks


def certain_fallback_rows(api_fallbacks, names, facts, delegated):
    """Rows of npu_cpu_fallbacks.tsv: per listed API and version, the operators it reaches that fall
    back to the CPU whatever the arguments, for rules to report.

    An operator counts when its name verdict is `fallback` (no functional or in-place overload has an
    NPU kernel) and some such overload falls back for certain: not one counted as fallback only because
    its registration name is no string of the .so (the least certain verdicts, see aten_ops_on_npu.tsv).
    A `partial` operator (the overload chosen by the arguments decides) is left out, as are APIs whose
    operators all fall in these two groups."""
    rows = []
    for api in sorted(api_fallbacks):
        cells, left_out = [], []
        for v in VERSIONS:
            certain = []
            for op in api_fallbacks[api].get(v, []):
                overloads = [n for n, slot in facts.items() if base_name(n) == op and slot.verdict.get(v) == "fallback"
                             and not is_out_variant(slot.func[v])]
                if names.get(op, {}).get(v) == "fallback" and any(n not in delegated[v] for n in overloads):
                    certain.append(op)
                else:
                    left_out.append(f"{v}: {op} ({names.get(op, {}).get(v, '-')}"
                                    + (", uncertain" if any(n in delegated[v] for n in overloads) else "") + ")")
            cells.append(" ".join(certain))
        if any(cells):
            rows.append([api] + cells + ["; ".join(left_out)])
    return rows


def unsupported_rows(huawei, api_verdicts):
    """Rows of unsupported_apis.tsv: every API any Huawei list marks unsupported."""
    rows = []
    apis = sorted(set().union(*(set(u) for u, _ in huawei.values())))
    for api in apis:
        status = []
        for suffix in HUAWEI_LISTS:
            unsupported, supported = huawei[suffix]
            status.append("unsupported" if api in unsupported else "supported" if api in supported else "-")
        key = api.replace("torch.Tensor.", "Tensor.")
        verdict = api_verdicts.get(key)
        if verdict is None and key.startswith("torch.nn.") and key.count(".") == 3:
            verdict = api_verdicts.get(key.rsplit(".", 1)[0])  # Module.forward -> the module
        cells = verdict if verdict else ["n/a"] * len(VERSIONS)
        contradicts = []
        for target, cell in zip(TARGETS, cells):
            if target.huawei and status[HUAWEI_LISTS.index(target.huawei)] == "unsupported" and cell == "kernel":
                contradicts.append(target.npu_version)
        facts_cell = "operator verdicts derived from the wheels" if verdict else \
            "not an operator call: the kernel tables cannot judge it"
        rows.append([api] + status + cells + [" ".join(contradicts) or "no", facts_cell])
    return rows


def dtype_rows(huawei):
    """Rows of op_dtype_limits.tsv: APIs whose supported_op note names dtypes or a known limit."""
    rows = []
    apis = sorted(set().union(*(set(s) for _, s in huawei.values())))
    for api in apis:
        lists, tags = [], set()
        for suffix in HUAWEI_LISTS[1:]:
            note = huawei[suffix][1].get(api)
            if note is None:
                lists.append("-")
                continue
            lists.append(dtype_sets(note) or "no dtype note")
            tags.update(note_tags(note))
        if all(c in ("-", "no dtype note") for c in lists) and not tags:
            continue
        newest = lists[-1]
        lacks = "-"
        if newest not in ("-", "no dtype note"):
            present = set(re.split(r"[,;:]", newest))
            lacks = " ".join(t for t in ("bf16", "fp64", "complex64", "complex128") if t not in present) or "none"
        rows.append([api] + lists + [lacks, " ".join(sorted(tags))])
    return rows


# Operator calls: torch.X, torch.{linalg,special,fft,nn.functional}.X and tensor methods.
OPERATOR_API = re.compile(r"^torch\.((linalg|special|fft|nn\.functional)\.)?[a-z_]\w*$|^torch\.Tensor\.[a-z_]\w*$")


def dtype_gap_rows(limits):
    """Rows of op_dtype_gaps.tsv: operator calls for which each of the three lists gives dtypes, and which of
    fp64, complex64 and complex128 none of them names."""
    rows = []
    for api, *lists, _lacks, _tags in limits:
        if not OPERATOR_API.match(api) or any(c in ("-", "no dtype note") for c in lists):
            continue
        named = [set(re.split(r"[,;:]", c)) for c in lists]
        left_out = [t for t in ("fp64", "complex64", "complex128") if not any(t in n for n in named)]
        if left_out:
            rows.append([api, " ".join(left_out)])
    return rows


ATEN_COMMENTS = [
    "Does an aten operator run on the NPU? Read from the wheels by scripts/npu_op_support.py (do not edit by hand).",
    "key op = an aten operator name without overload, listed when some overload needs a backend kernel at some target",
    "(not CompositeImplicitAutograd in that torch version's torchgen/packaged/ATen/native/native_functions.yaml).",
    "cells, per torch_npu version (torch version = the one its METADATA pins):",
    "  kernel    no functional/in-place overload falls back: torch_npu registers an NPU kernel (yaml sections",
    "            supported, symint, autograd of torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml; the",
    "            functional/in-place members of a structured group whose out= kernel is listed there, when their",
    "            registration name is a string of libtorch_npu.so; _foreach_* overloads torch_npu registers with",
    "            torch's per-tensor loop), or a composite kernel runs; out= overloads may still fall back",
    "            (aten_overloads_on_npu.tsv).",
    "  fallback  no NPU kernel: torch_npu's boxed PrivateUse1 fallback (npu_cpu_fallback -> at::native::cpu_fallback)",
    "            copies the inputs to the host, runs the CPU kernel and copies the outputs back.",
    "  partial   some functional/in-place overloads have an NPU kernel, others fall back.",
    "  composite no NPU kernel, but torch's CompositeExplicitAutograd(NonFunctional) kernel is picked before the",
    "            backend fallback (OperatorEntry::computeDispatchTableEntryWithDebug): it runs on the NPU and",
    "            calls other operators, whose rows decide.",
    "  implicit  CompositeImplicitAutograd in that torch version (decomposes before the backend is chosen).",
    "  -         no such operator in that torch version.",
    "note: the NPU kernel has a CPU path of its own, announced by a 'will fallback to run on the CPU' message in",
    "  libtorch_npu.so and chosen at run time (SoC, CANN version or arguments).",
]
OVERLOAD_COMMENTS = [
    "Per-overload detail of aten_ops_on_npu.tsv (same sources and cell values; also nondense = only sparse,",
    "quantized, nested or mkldnn kernels exist). Generated by scripts/npu_op_support.py.",
]
API_COMMENTS = [
    "Python APIs and the aten operators that decide whether they run on the NPU. Generated by",
    "scripts/npu_op_support.py from torch's own Python sources in each torch wheel (calls of torch.X, torch._C._nn.X,",
    "_VF.X, torch.linalg/fft/special.X, F.X, helpers of the same file and tensor methods, followed through",
    "nn/functional.py, functional.py, _tensor.py, nn/modules (forward) and distributions (__init__, sample,",
    "rsample, log_prob, with base classes)) plus scripts/npu_op_support_overrides.tsv (curated decompositions of",
    "CompositeImplicitAutograd operators and APIs the reading cannot follow, each with its source).",
    "Listed: APIs whose verdict is not kernel at every target, and the APIs the issue names (negatives included).",
    "ops = the deciding operators (verdicts in aten_ops_on_npu.tsv); CompositeImplicitAutograd operators without a",
    "curated decomposition are left out and do not count.",
    "cells: kernel (every deciding operator has an NPU kernel or a composite kernel), fallback (every one falls",
    "back to the CPU), partial (some code path of the API falls back: fallback_ops names which), composite, -",
    "(the API does not exist in that torch version).",
]
FALLBACK_COMMENTS = [
    "Python APIs of torch_api_ops.tsv that reach an operator torch_npu's CPU fallback runs, whatever the arguments:",
    "per version, the operators whose every functional and in-place overload has no NPU kernel (aten_ops_on_npu.tsv",
    "verdict fallback), leaving out overloads counted as fallback only because their registration name is no",
    "string of libtorch_npu.so (the least certain verdicts) and partial operators (the overload the arguments pick",
    "decides). - = none at that version. left_out names what the torch_api_ops.tsv fallback_ops column has and this",
    "table does not, with the operator's verdict. For rules: a cell is what a call of the API runs on the CPU.",
    "Generated by scripts/npu_op_support.py.",
]
UNSUPPORTED_COMMENTS = [
    "APIs that Huawei's op_list_2_{1,6,7,8}.json mark unsupported, against what the wheels show.",
    "Source of the list_* columns: xiaobingling93-pixel/Ascend-mstt msfmktransplt/src/ms_fmk_transplt/resource/",
    "op_list_<v>.json (unsupported) and supported_op_<v>.json (supported); - = in neither list. The lists carry no",
    "tip text (empty or '-'). The version columns are the API's verdict in torch_api_ops.tsv terms (kernel,",
    "fallback, partial, composite, implicit), or n/a when the API is no operator call (classes, storage, backends",
    "flags): there the list is the only fact. wheel_contradicts names the targets where the list says",
    "unsupported but the wheel registers NPU kernels for every deciding operator (list 2_1 vs 2.1.0.post17, 2_6",
    "vs 2.6.0.post5; Huawei publishes no list for 2.14). Generated by scripts/npu_op_support.py.",
]
DTYPE_COMMENTS = [
    "Data-type limits Huawei documents per API in supported_op_2_{6,7,8}.json (xiaobingling93-pixel/Ascend-mstt,",
    "msfmktransplt/src/ms_fmk_transplt/resource/); supported_op_2_1.json carries no notes.",
    "list_* cells: the dtypes the note says are supported (scope: product family when the note splits by product),",
    "'no dtype note', or - (API absent from that list). lacks_in_list_2_8: which of bf16 fp64 complex64",
    "complex128 the newest list leaves out. tags: recognised notes in English (may-fall-back-to-cpu,",
    "inference-only, cpu-only, no-float64, ...). Only APIs with a dtype list or a tag are listed.",
    "The wheels' own kernels carry their dtype checks in compiled code: not read here.",
    "Generated by scripts/npu_op_support.py.",
]
GAP_COMMENTS = [
    "Operator calls (torch.X, torch.{linalg,special,fft,nn.functional}.X, torch.Tensor.X) whose dtypes each of",
    "Huawei's supported_op_2_{6,7,8}.json notes lists, and which of fp64, complex64 and complex128 none of the",
    "three names (left_out). Derived from op_dtype_limits.tsv; the rules read this smaller table (API019).",
    "Generated by scripts/npu_op_support.py.",
]
HCCL_COMMENTS = [
    "HCCL data types and collectives of torch_npu's ProcessGroupHCCL. Generated by scripts/npu_op_support.py.",
    "dtype:torch.X = the HcclDataType torch dtype X is sent as (HCCLUtils.cpp kScalarTypeToHcclDataType; a dtype",
    "  without a row raises 'Unsupported data type for HCCL process group', a message present in all three .so).",
    "collective:NAME = ProcessGroupHCCL::NAME (ProcessGroupHCCL.cpp): the dtypes it accepts ('any mapped' = no",
    "  check beyond the map; a checkSupportedDataType call limits it to the listed types), or raises",
    "  ('ProcessGroupHCCL does not support ...', also in the .so strings).",
    "reduce_op:X = c10d ReduceOp handling (native HCCL op, raises, or emulated).",
    "hccl_types.h:HcclDataType = the enum in the wheel's torch_npu/include/third_party/hccl/inc/hccl/hccl_types.h.",
    "torch_npu replaces torch.distributed.gather / gather_object in Python (torch_npu/distributed/distributed_c10d.py",
    "  _gather), so collective:gather raising concerns direct ProcessGroup calls only.",
    "Source commits (Ascend/pytorch):",
]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
