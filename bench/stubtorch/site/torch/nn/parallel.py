"""torch.nn.parallel: DistributedDataParallel wraps the module (on the device it is already on)."""

import stubrec


def _wrap():
    from torch.nn import Module

    class DistributedDataParallel(Module):
        """`DistributedDataParallel`: records the device of the wrapped module."""

        def __init__(self, module, device_ids=None, output_device=None, **kwargs):
            super().__init__()
            stubrec.record(module._device().type, "nn.parallel.DistributedDataParallel", f"device_ids={device_ids!r}")
            self.module = module

    return DistributedDataParallel


def __getattr__(name):
    if name == "DistributedDataParallel":
        cls = _wrap()
        globals()[name] = cls
        return cls
    if name == "DataParallel":
        from torch.nn import DataParallel

        return DataParallel
    raise AttributeError(name)
