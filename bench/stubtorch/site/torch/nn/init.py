"""torch.nn.init: initialisers leave the stub tensor as it is."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda tensor=None, *args, **kwargs: tensor
