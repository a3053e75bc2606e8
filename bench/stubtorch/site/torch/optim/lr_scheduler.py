"""torch.optim.lr_scheduler: schedulers that keep the learning rate."""


class _Scheduler:
    def __init__(self, optimizer, *args, **kwargs):
        self.optimizer = optimizer
        self.last_epoch = kwargs.get("last_epoch", -1)
        for group in optimizer.param_groups:
            # As torch's schedulers do on a fresh start.
            group.setdefault("initial_lr", group["lr"])

    def step(self, *args, **kwargs):
        self.last_epoch += 1

    def get_last_lr(self):
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def __getattr__(name):
    if name.startswith("__") or not name[:1].isupper():
        raise AttributeError(name)
    cls = type(name, (_Scheduler,), {})
    globals()[name] = cls
    return cls
