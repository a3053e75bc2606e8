"""The optimizer base class."""


class Optimizer:
    """Holds `param_groups` (with the defaults filled in); `step` does nothing."""

    def __init__(self, params, lr=0.001, **defaults):
        defaults["lr"] = lr
        self.defaults = defaults
        params = list(params)
        if params and not isinstance(params[0], dict):
            params = [{"params": params}]
        self.param_groups = []
        for group in params:
            full = dict(defaults)
            full.update(group)
            full.setdefault("weight_decay", 0)
            self.param_groups.append(full)
        self.state = {}

    def add_param_group(self, group):
        self.param_groups.append(dict(self.defaults, **group))

    def zero_grad(self, set_to_none=True):
        pass

    def step(self, closure=None):
        return None

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass
