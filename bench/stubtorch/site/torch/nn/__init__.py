"""torch.nn: modules hold parameters whose device moves are recorded; layers do not compute."""

import stubrec
from torch._device import device, device_type, targeted
from torch._tensor import CPU, Tensor
from torch.nn import functional, init, modules, parallel, utils  # noqa: F401


class Parameter(Tensor):
    """A parameter: a stub tensor (`Parameter(tensor)` keeps the tensor's device)."""

    def __init__(self, data=None, requires_grad=True):
        super().__init__(device=data.device if isinstance(data, Tensor) else CPU,
                         shape=data.shape if isinstance(data, Tensor) else (2, 2))
        self.requires_grad = requires_grad


class _LayerAttribute(Parameter):
    """An attribute of a torch layer the stub does not model: a parameter, or a method that does nothing."""

    def __call__(self, *args, **kwargs):
        return None


class Module:
    """A module: tracks its parameters and submodules; calling it returns a tensor on their device.

    `forward` is not run: the stub has no data, and the layers a model is
    built from would need real shapes. Subclasses' own code runs only where
    the program calls it directly.
    """

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "training", True)
        if getattr(type(self), "_stub_layer", False):
            # A layer of torch's own: one weight and one bias.
            for key in ("weight", "bias"):
                self._parameters[key] = Parameter()
                object.__setattr__(self, key, self._parameters[key])

    def __setattr__(self, name, value):
        if "_modules" not in self.__dict__:
            Module.__init__(self)
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, Parameter):
            self._parameters[name] = value
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_modules", "_parameters", "_buffers"):
            raise AttributeError(name)
        if getattr(type(self), "_stub_layer", False):
            # Other attributes of torch's layers (weight_g, running_mean,
            # flatten_parameters, ...) read as parameters that can be called.
            param = _LayerAttribute(self._parameters["weight"])
            self._parameters[name] = param
            object.__setattr__(self, name, param)
            return param
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def add_module(self, name, module):
        setattr(self, name, module)

    def children(self):
        return iter(self._modules.values())

    def named_children(self):
        return iter(self._modules.items())

    def modules(self):
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def named_modules(self, prefix=""):
        yield prefix, self
        for key, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{key}" if prefix else key)

    def named_parameters(self, prefix="", recurse=True):
        for key, param in self._parameters.items():
            yield (f"{prefix}.{key}" if prefix else key), param
        if recurse:
            for key, child in self._modules.items():
                yield from child.named_parameters(f"{prefix}.{key}" if prefix else key)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def buffers(self):
        return iter(())

    def named_buffers(self):
        return iter(())

    def register_buffer(self, name, tensor, persistent=True):
        if "_modules" not in self.__dict__:
            Module.__init__(self)
        self._buffers[name] = tensor
        object.__setattr__(self, name, tensor)

    def _move(self, dev):
        # Parameters and buffers move in place, as in torch.
        for module in self.modules():
            for tensor in list(module._parameters.values()) + list(module._buffers.values()):
                if isinstance(tensor, Tensor):
                    tensor.device = dev
        return self

    def to(self, *args, **kwargs):
        spec = kwargs.get("device")
        for arg in args:
            if spec is None and device_type(arg) is not None:
                spec = arg
        dev = targeted(spec, f"{type(self).__name__}.to")
        return self._move(dev) if dev is not None else self

    def cuda(self, dev=None):
        stubrec.record("cuda", f"{type(self).__name__}.cuda", repr(dev))
        return self._move(device("cuda", dev if isinstance(dev, int) else None))

    def npu(self, dev=None):
        if not stubrec._state["torch_npu_imported"]:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'npu'")
        stubrec.record("npu", f"{type(self).__name__}.npu", repr(dev))
        return self._move(device("npu", dev if isinstance(dev, int) else None))

    def cpu(self):
        return self._move(CPU)

    def _device(self):
        for param in self.parameters():
            return param.device
        return CPU

    def __call__(self, *args, **kwargs):
        own = self._device()
        for arg in args:
            if isinstance(arg, Tensor) and next(self.parameters(), None) is not None and arg.device.type != own.type:
                # Parameters on one device, input on another: torch raises.
                stubrec.record(None, f"{type(self).__name__}.__call__", f"parameters on {own.type}, input on {arg.device.type}")
                stubrec._events[-1]["severity"] = "error"
        return Tensor(device=own)

    def train(self, mode=True):
        object.__setattr__(self, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, flag=True):
        return self

    def zero_grad(self, set_to_none=True):
        pass

    def apply(self, fn):
        for module in self.modules():
            fn(module)
        return self

    def half(self):
        return self

    def float(self):
        return self

    def state_dict(self, *args, **kwargs):
        return {}

    def load_state_dict(self, state, strict=True):
        return ([], [])


class Sequential(Module):
    """`nn.Sequential` / `nn.ModuleList`: holds the modules given."""

    def __init__(self, *mods):
        super().__init__()
        if len(mods) == 1 and isinstance(mods[0], (list, tuple)):
            mods = mods[0]
        for i, mod in enumerate(mods):
            setattr(self, str(i), mod)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def append(self, mod):
        setattr(self, str(len(self._modules)), mod)
        return self

    def extend(self, mods):
        for mod in mods:
            self.append(mod)
        return self


ModuleList = Sequential


class DataParallel(Module):
    """`nn.DataParallel`: recorded, as torch_npu does not support it."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        stubrec.record(module._device().type, "nn.DataParallel", "single-process DataParallel")
        if stubrec.HOST == "npu" or module._device().type == "npu":
            stubrec._events[-1]["severity"] = "error"
        self.module = module


class SyncBatchNorm(Module):
    """`nn.SyncBatchNorm`: `convert_sync_batchnorm` returns the module unchanged."""

    @staticmethod
    def convert_sync_batchnorm(module, process_group=None):
        return module


def __getattr__(name):
    if name.startswith("__") or not name[:1].isupper():
        raise AttributeError(f"module 'torch.nn' has no attribute '{name}'")
    # Losses hold no parameters (their `.to()` moves nothing that could clash).
    layer = type(name, (Module,), {"__module__": "torch.nn", "_stub_layer": not name.endswith("Loss")})
    globals()[name] = layer
    return layer
