"""torch.nn.functional: each function returns a tensor on its first tensor argument's device."""

from torch._tensor import elementwise


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return elementwise(f"nn.functional.{name}")
