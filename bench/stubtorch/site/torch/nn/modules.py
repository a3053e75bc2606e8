"""torch.nn.modules: `torch.nn.modules.<file>.<Layer>` names the same layer as `torch.nn.<Layer>`."""


class _File:
    def __getattr__(self, name):
        import torch.nn

        return getattr(torch.nn, name)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _File()
