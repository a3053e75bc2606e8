"""torch.accelerator (torch 2.6): answers for the accelerator the host has registered.

On an NPU host the accelerator is registered by `import torch_npu`; before
it, torch sees none.
"""

import stubrec
from torch._device import device


def _kind():
    if stubrec.HOST == "npu":
        return "npu" if stubrec._state["torch_npu_imported"] else None
    return "cuda"


def is_available():
    """Whether an accelerator is registered."""
    return _kind() is not None


def current_accelerator():
    """The registered accelerator's device type."""
    kind = _kind()
    return device(kind) if kind else None


def device_count():
    """One device, or none."""
    return 1 if _kind() else 0


def set_device_index(index):
    """Records the accelerator it selects."""
    stubrec.record(_kind(), "torch.accelerator.set_device_index", repr(index))


set_device_idx = set_device_index


def current_device_index():
    """Device 0."""
    return 0


def synchronize(dev=None):
    """Records the accelerator it waits on."""
    stubrec.record(_kind(), "torch.accelerator.synchronize")
