"""torch.nn.utils: weight/spectral norm return the module; gradient clipping returns 0."""


def weight_norm(module, *args, **kwargs):
    """Returns the module unchanged."""
    return module


spectral_norm = weight_norm


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda *args, **kwargs: 0.0
