"""A stub of torch that records which device each call targets (see ../stubrec.py).

It holds no data and computes nothing: tensors carry a device and a shape,
modules do not run their layers. What it checks is where the program sends
its tensors, models, AMP and process groups, on a CUDA or an NPU host.
"""

import stubrec
from torch._device import device, targeted
from torch._tensor import Tensor, elementwise, factory
from torch._amp import autocast
from torch._devapi import make_device_module

__version__ = "2.6.0+stub"

cuda = make_device_module("cuda")

float16 = half = "float16"
bfloat16 = "bfloat16"
float32 = float = "float32"
float64 = double = "float64"
int8, int16, int32, int64, long, uint8, bool = "int8", "int16", "int32", "int64", "int64", "uint8", "bool"
dtype = str
Size = tuple
FloatTensor = LongTensor = HalfTensor = IntTensor = BoolTensor = ByteTensor = Tensor

for _name in ("tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
              "linspace", "eye", "as_tensor", "from_numpy", "zeros_like", "ones_like", "empty_like",
              "full_like", "rand_like", "randn_like"):
    globals()[_name] = factory(_name)


def _npu_tensor_attr(tensor, name):
    """`Tensor.npu` and `Tensor.is_npu`, which exist only once torch_npu is imported."""
    if not stubrec._state["torch_npu_imported"]:
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")
    if name == "is_npu":
        return tensor.device.type == "npu"

    def npu(dev=None, non_blocking=False, **kwargs):
        stubrec.record("npu", "Tensor.npu", repr(dev))
        return tensor._like(device("npu", dev if isinstance(dev, int) else None))

    return npu


class _Checkpoint(dict):
    """What `torch.load` returns: every key missing from it reads as a cpu tensor."""

    def __missing__(self, key):
        return Tensor()


#: What this process saved, by path: `torch.load` gives it back.
_saved = {}


def _path(f):
    return str(getattr(f, "name", f))


def load(f, map_location=None, **kwargs):
    """`torch.load`: records `map_location`; returns what this process saved there, else cpu tensors."""
    targeted(map_location, "torch.load map_location")
    return _saved.get(_path(f), _Checkpoint())


def save(obj, f, *args, **kwargs):
    """`torch.save`: keeps `obj` for `load`, and writes an empty file (programs copy it)."""
    _saved[_path(f)] = obj
    if isinstance(f, str):
        open(f, "wb").close()


class no_grad(stubrec.NullContext):
    """`torch.no_grad()`, as a context manager and a decorator."""


inference_mode = enable_grad = no_grad


def set_grad_enabled(mode):
    """`torch.set_grad_enabled`: a no-op context."""
    return no_grad()


def is_tensor(value):
    """Whether `value` is a stub tensor."""
    return isinstance(value, Tensor)


def manual_seed(seed):
    """`torch.manual_seed`: seeds nothing."""


#: torch's namespaces the stub does not model: served as permissive modules.
NAMESPACES = {"autograd", "jit", "onnx", "hub", "fft", "linalg", "special", "testing", "overrides", "library",
              "ops", "profiler", "sparse", "quantization", "distributions", "package", "cuda_graphs", "compiler", "serialization"}


def __getattr__(name):
    if name == "accelerator":
        raise AttributeError("module 'torch' has no attribute 'accelerator' (torch 2.1)")
    if name in NAMESPACES:
        import importlib

        return importlib.import_module(f"torch.{name}")
    if name == "npu":
        raise AttributeError("module 'torch' has no attribute 'npu' (import torch_npu first)")
    if name.startswith("__") or name[:1].isupper():
        raise AttributeError(f"module 'torch' has no attribute '{name}'")
    func = elementwise(name)
    globals()[name] = func
    return func


# Submodules the programs reach as attributes of torch.
# (`import torch.X`, not `from torch import X`: the latter would ask the
# module's __getattr__ first and get a function.)
if stubrec.TORCH != "2.1":
    import torch.accelerator  # noqa: E402
import torch.amp  # noqa: E402
import torch.backends  # noqa: E402
import torch.distributed  # noqa: E402
import torch.multiprocessing  # noqa: E402
import torch.nn  # noqa: E402
import torch.optim  # noqa: E402
import torch.utils  # noqa: E402

Parameter = torch.nn.Parameter

if stubrec.TORCH != "2.1" and stubrec.HOST == "npu":
    # torch >= 2.5 loads the device extensions its entry points name.
    import torch_npu  # noqa: E402,F401
