"""torch.device and the rule that turns a device argument into a device type."""

import stubrec


class device:
    """A device: `type` and `index`, built from a string, a number or another device."""

    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, int):
            # An integer is a CUDA ordinal in torch 2.1 (deepspeedai/DeepSpeed#3933:
            # "device=Integer will always choose cuda" on an NPU host); from
            # pytorch/pytorch#129119 on, the available accelerator's.
            self.type, self.index = ("cuda" if stubrec.TORCH == "2.1" else stubrec.ACCEL), spec
            return
        text = str(spec)
        kind, _, number = text.partition(":")
        self.type = kind
        self.index = int(number) if number else index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type + (f":{self.index}" if self.index is not None else "")

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def device_type(spec):
    """The device type a `device=`/`.to()` argument names, or None when it names none."""
    if spec is None:
        return None
    if isinstance(spec, device):
        return spec.type
    if isinstance(spec, (int, str)) and not isinstance(spec, bool):
        return device(spec).type
    inner = getattr(spec, "device", None)
    if isinstance(inner, device):
        return inner.type
    return None


def targeted(spec, what, detail=""):
    """Record a call given the device argument `spec`, and return the device it names (None if none)."""
    kind = device_type(spec)
    if kind is not None:
        stubrec.record(kind, what, detail or repr(spec))
        return device(spec) if not isinstance(spec, device) and isinstance(spec, (int, str)) else (
            spec if isinstance(spec, device) else spec.device)
    return None
