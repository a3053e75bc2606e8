"""A tensor that holds no data, only a device and a shape.

Every method the stub does not define returns a new tensor on the same
device, so arithmetic and library calls run; device moves are recorded, and
so is an operation that mixes two accelerator types.
"""

import stubrec
from torch._device import device, device_type, targeted

CPU = device("cpu")


def _device_of(values):
    """The device of the first tensor among `values` (lists and tuples searched too), else cpu."""
    for value in values:
        if isinstance(value, Tensor):
            return value.device
        if isinstance(value, (list, tuple)):
            found = _device_of(value)
            if found is not CPU:
                return found
    return CPU


def check_mixed(values, what):
    """Record an error when tensors on two different device types meet in one operation.

    A CPU tensor with no dimensions may meet any device, as in torch.
    """
    kinds = {v.device.type for v in values
             if isinstance(v, Tensor) and not (v.device.type == "cpu" and v.shape == ())}
    if len(kinds) > 1:
        stubrec.record(None, what, "mixes " + " and ".join(sorted(kinds)))
        stubrec._events[-1]["severity"] = "error"


class Tensor(stubrec.ZeroNumber):
    """A data-less tensor: `device`, `shape`, and permissive methods."""

    def __init__(self, *data, device=None, shape=(2, 2), dtype=None, **kwargs):
        self.device = device if device is not None else CPU
        self.shape = tuple(shape)
        self.dtype = dtype
        self.grad = None
        self.requires_grad = False
        self.data = self

    def _like(self, dev=None):
        return Tensor(device=dev or self.device, shape=self.shape, dtype=self.dtype)

    # Device moves.
    def to(self, *args, **kwargs):
        spec = kwargs.get("device")
        for arg in args:
            if spec is None and device_type(arg) is not None:
                spec = arg
        dev = targeted(spec, "Tensor.to")
        return self._like(dev)

    def cuda(self, dev=None, non_blocking=False, **kwargs):
        stubrec.record("cuda", "Tensor.cuda", repr(dev))
        return self._like(device("cuda", dev if isinstance(dev, int) else None))

    def cpu(self):
        return self._like(CPU)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "npu" or name == "is_npu":
            # torch_npu adds these; without it they do not exist.
            import torch

            return torch._npu_tensor_attr(self, name)

        def method(*args, **kwargs):
            check_mixed(args, f"Tensor.{name}")
            return self._like()

        return method

    # Values.
    # Values read back are 1.0: counts and averages stay defined.
    def item(self):
        return 1.0

    def tolist(self):
        return [1.0] * (self.shape[0] if self.shape else 1)

    def numpy(self):
        import numpy

        return numpy.zeros(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        total = 1
        for n in self.shape:
            total *= n
        return total

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __iter__(self):
        return iter([Tensor(device=self.device, shape=self.shape[1:]) for _ in range(len(self))])

    def __getitem__(self, key):
        return Tensor(device=self.device, shape=self.shape[1:] or (1,))

    def __setitem__(self, key, value):
        check_mixed([self, value], "Tensor.__setitem__")

    def __bool__(self):
        return True

    def __format__(self, spec):
        return format(0.0, spec)

    def __repr__(self):
        return f"Tensor(device={self.device}, shape={self.shape})"

    __hash__ = object.__hash__


def _binary(name):
    def op(self, other):
        check_mixed([self, other], f"Tensor.{name}")
        return self._like()

    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Tensor, f"__{_name}__", _binary(_name))
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(Tensor, f"__r{_name}__", _binary(_name))
        setattr(Tensor, f"__i{_name}__", _binary(_name))
Tensor.__neg__ = lambda self: self._like()
Tensor.__hash__ = object.__hash__


def _shape_of(name, args):
    """The shape a factory's arguments ask for (sizes, a size tuple, or the data's length)."""
    if name in ("tensor", "as_tensor") and args and isinstance(args[0], (list, tuple)):
        return (len(args[0]),) if args[0] else (0,)
    if name in ("tensor", "as_tensor") and args and isinstance(args[0], (int, float)):
        return ()
    if args and isinstance(args[0], (list, tuple)) and all(isinstance(n, int) for n in args[0]):
        return tuple(args[0])
    if name == "linspace" and len(args) >= 3:
        return (int(args[2]),)
    if name == "arange" and args:
        return (len(range(*[int(a) for a in args[:3]])),)
    sizes = tuple(a for a in args if isinstance(a, int) and not isinstance(a, bool))
    if sizes and name in ("zeros", "ones", "empty", "rand", "randn", "full"):
        return sizes
    if args and isinstance(args[0], Tensor):
        return args[0].shape
    return (2, 2)


def factory(name):
    """A tensor factory (`torch.zeros`, ...) that records its `device=` keyword."""

    def make(*args, **kwargs):
        dev = targeted(kwargs.get("device"), f"torch.{name}")
        if dev is None:
            dev = _device_of(args) if name.endswith("_like") else CPU
        return Tensor(device=dev, shape=_shape_of(name, args))

    return make


def elementwise(name):
    """A torch function whose result lives on the device of its first tensor argument."""

    def call(*args, **kwargs):
        flat = list(args) + [a for v in args if isinstance(v, (list, tuple)) for a in v]
        check_mixed(flat, f"torch.{name}")
        return Tensor(device=_device_of(args))

    return call
