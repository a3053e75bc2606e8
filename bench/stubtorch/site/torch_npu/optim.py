"""torch_npu.optim: the fused optimizers, which run on NPU parameters only."""

import stubrec
from torch.optim.optimizer import Optimizer


class _NpuFused(Optimizer):
    def __init__(self, params, *args, **kwargs):
        super().__init__(params, *args, **kwargs)
        kinds = {p.device.type for g in self.param_groups for p in g["params"] if hasattr(p, "device")}
        stubrec.record("npu", f"torch_npu.optim.{type(self).__name__}", "params on " + ",".join(sorted(kinds)))
        if kinds - {"npu"}:
            stubrec._events[-1]["severity"] = "error"


def __getattr__(name):
    if not name.startswith("NpuFused"):
        raise AttributeError(name)
    cls = type(name, (_NpuFused,), {})
    globals()[name] = cls
    return cls
