"""Autocast and grad scalers that record the device they serve."""

import stubrec


class autocast(stubrec.NullContext):
    """`torch.autocast(device_type, ...)`; usable as a context manager and a decorator."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None, what="torch.autocast"):
        self.device_type = str(device_type)
        stubrec.record(self.device_type.split(":")[0], what, f"enabled={enabled!r}", disabled=not enabled)


class GradScaler:
    """`torch.amp.GradScaler(device)`: scales nothing, records its device."""

    def __init__(self, device="cuda", init_scale=65536.0, enabled=True, what="torch.amp.GradScaler", **kwargs):
        stubrec.record(str(device).split(":")[0], what, f"enabled={enabled!r}", disabled=not enabled)
        self._enabled = enabled

    def scale(self, loss):
        return loss

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step()

    def update(self, new_scale=None):
        pass

    def is_enabled(self):
        return bool(self._enabled)

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass

    def get_scale(self):
        return 1.0


def device_amp(kind, module_name):
    """The `torch.<kind>.amp` module: autocast and GradScaler bound to that device type."""
    import types

    module = types.ModuleType(module_name)

    class DeviceAutocast(autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            super().__init__(kind, dtype, enabled, cache_enabled, what=f"torch.{kind}.amp.autocast")

    class DeviceGradScaler(GradScaler):
        def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True, **kwargs):
            super().__init__(kind, init_scale, enabled, what=f"torch.{kind}.amp.GradScaler")

    DeviceAutocast.__name__, DeviceGradScaler.__name__ = "autocast", "GradScaler"
    module.autocast, module.GradScaler = DeviceAutocast, DeviceGradScaler
    return module
