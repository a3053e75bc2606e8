"""torch.optim: optimizers keep their parameter groups and do nothing."""

from torch.optim import lr_scheduler  # noqa: F401
from torch.optim.optimizer import Optimizer


def __getattr__(name):
    if name.startswith("__") or not name[:1].isupper():
        raise AttributeError(name)
    cls = type(name, (Optimizer,), {"__module__": "torch.optim"})
    globals()[name] = cls
    return cls
