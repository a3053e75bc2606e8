"""The `torch.cuda` and `torch.npu` namespaces: every call recorded with its device type."""

import os
import sys
import types

import stubrec
from torch._amp import device_amp
from torch._device import device
from torch._tensor import Tensor


def available(kind):
    """Whether the host has a device of this type."""
    return kind == stubrec.ACCEL


class _Properties:
    def __init__(self, kind):
        self.name = f"stub {kind} device"
        self.total_memory = 32 * 1024 ** 3
        self.major, self.minor, self.multi_processor_count = 8, 0, 1


def make_device_module(kind):
    """Build `torch.<kind>` (and `torch.<kind>.amp`), registered in sys.modules."""
    name = f"torch.{kind}"
    count = int(os.environ.get("STUBTORCH_DEVICES", "1")) if available(kind) else 0

    answers = {
        "is_available": lambda *a, **k: available(kind),
        "device_count": lambda *a, **k: count,
        "current_device": lambda *a, **k: 0,
        "is_initialized": lambda *a, **k: available(kind),
        "get_device_name": lambda *a, **k: f"stub {kind} device",
        "get_device_properties": lambda *a, **k: _Properties(kind),
        "memory_stats": lambda *a, **k: {},
        "is_bf16_supported": lambda *a, **k: available(kind),
    }

    class DeviceModule(types.ModuleType):
        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            if attr[:1].isupper() and attr.endswith("Tensor"):
                def typed(*args, **kwargs):
                    stubrec.record(kind, f"{name}.{attr}")
                    return Tensor(device=device(kind))
                return typed
            answer = answers.get(attr, lambda *a, **k: 0)

            def call(*args, **kwargs):
                stubrec.record(kind, f"{name}.{attr}", ", ".join(map(repr, args)))
                return answer(*args, **kwargs)

            return call

    module = DeviceModule(name)
    module.__path__ = []
    module.amp = device_amp(kind, f"{name}.amp")
    sys.modules[name] = module
    sys.modules[f"{name}.amp"] = module.amp
    return module
