"""Records the device every stubbed call targets, and serves permissive modules.

The stub `torch` (beside this file) calls `record` for each call that names a
device. Each record says which device type the call targets, what it is, and
where in the program under test it was made (the first stack frame outside
this directory). At exit the records are written as JSON to the file named
by STUBTORCH_LOG, with the host mode from STUBTORCH_HOST:

- `cuda`: a CUDA host. torch.cuda works, `import torch_npu` fails.
- `cuda-npulib`: a CUDA host where `import torch_npu` succeeds but no NPU is
  present (torch.npu.is_available() is False). No real host is like this
  (torch_npu needs CANN to import); it lets a fixed program that imports
  torch_npu unconditionally get past that import, so its CUDA branches run.
- `npu`: an Ascend host without transfer_to_npu. `import torch_npu` adds
  torch.npu; torch.cuda.is_available() is False.

STUBTORCH_TORCH picks the torch release the stub imitates: `2.1` (the
default: no torch.accelerator, torch_npu loads only when imported) or `2.6`
(torch.accelerator exists, and on the NPU host `import torch` loads
torch_npu itself, through the `torch.backends` entry point the torch_npu 2.6
wheel declares).
"""

import atexit
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = os.environ.get("STUBTORCH_HOST", "cuda")
if HOST not in ("cuda", "cuda-npulib", "npu"):
    raise SystemExit(f"stubtorch: STUBTORCH_HOST must be cuda, cuda-npulib or npu, not {HOST!r}")

#: The accelerator type the host has.
ACCEL = "npu" if HOST == "npu" else "cuda"

TORCH = os.environ.get("STUBTORCH_TORCH", "2.1")
if TORCH not in ("2.1", "2.6"):
    raise SystemExit(f"stubtorch: STUBTORCH_TORCH must be 2.1 or 2.6, not {TORCH!r}")

#: torch.cuda (and torch.npu) calls that only ask, or that torch defers
#: (the seeds); on a host without that device they return False, 0 or an
#: empty answer, or do nothing, instead of raising.
SILENT = {"manual_seed", "manual_seed_all", "seed", "seed_all",
    "is_available", "device_count", "is_initialized", "memory_allocated",
    "memory_reserved", "max_memory_allocated", "max_memory_reserved",
    "memory_stats", "memory_cached", "is_bf16_supported",
}

_events = []
_state = {"torch_npu_imported": False}


def where():
    """The `file:line` of the innermost frame outside the stub, relative to the current directory."""
    frame = sys._getframe(1)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(HERE + os.sep):
            rel = os.path.relpath(name)
            return f"{rel}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def severity(target, what):
    """How a call that targets `target` fares on this host.

    `error`: it would raise (or, for autocast and grad scalers, silently turn
    itself off) on a real host of this kind; `silent`: a torch.cuda/torch.npu
    call that answers False or 0, or does nothing, on a host without that
    device; `ok` otherwise.
    """
    if target in (None, "cpu", "meta"):
        return "ok"
    if target == ACCEL:
        return "ok"
    if what.startswith(f"torch.{target}.") and what.split(".")[-1] in SILENT:
        return "silent"
    return "error"


def record(target, what, detail="", disabled=False):
    """Remember that `what` targets the device type `target` (cuda, npu, cpu or None).

    `disabled`: the call was told not to act (autocast or a grad scaler with
    enabled=False), so the wrong device costs nothing: at most `silent`.
    """
    level = severity(target, what)
    _events.append({
        "target": target,
        "what": what,
        "detail": detail,
        "where": where(),
        "severity": "silent" if disabled and level == "error" else level,
    })


def mark_torch_npu_imported():
    """Note that the program imported torch_npu."""
    _state["torch_npu_imported"] = True


def _dump():
    path = os.environ.get("STUBTORCH_LOG")
    if not path:
        return
    with open(path, "w", encoding="utf-8") as out:
        json.dump({"host": HOST, "torch_npu_imported": _state["torch_npu_imported"], "events": _events}, out, indent=1)


atexit.register(_dump)


class ZeroNumber:
    """Reads as the number 0 (`float()`, `int()`, and as an index)."""

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    def __index__(self):
        return 0


class NullContext:
    """A context manager and decorator that does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


class Anything(ZeroNumber, NullContext):
    """A permissive value: any attribute, call, item or iteration succeeds."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __call__(self, *args, **kwargs):
        return Anything()

    def __getitem__(self, key):
        return Anything()

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __radd__(self, other):
        # `[...] + torch.hub.list(...)`: an empty answer leaves the list as it is.
        return other

    def __mro_entries__(self, bases):
        return (Anything,)


class PermissiveModule(types.ModuleType):
    """A module whose every missing attribute is an `Anything` (or a class, when capitalised)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (Anything,), {}) if name[:1].isupper() else Anything()
        setattr(self, name, value)
        return value


class PermissiveFinder:
    """Serves a `PermissiveModule` for the listed top-level names and their submodules."""

    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery

        if fullname.split(".")[0] not in self.roots:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = PermissiveModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def install_permissive(roots):
    """Make the listed third-party packages importable as permissive stubs."""
    sys.meta_path.append(PermissiveFinder(roots))
