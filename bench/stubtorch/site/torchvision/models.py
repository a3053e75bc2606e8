"""torchvision.models: each architecture builds a stub module with one parameter."""

from torch import nn

_ARCHS = ("resnet18", "resnet34", "resnet50", "resnet101", "alexnet", "vgg16")


def _builder(arch):
    def build(*args, **kwargs):
        model = nn.Module()
        model.fc = nn.Linear()
        model.features = nn.Sequential(nn.Conv2d())
        return model

    build.__name__ = arch
    return build


for _arch in _ARCHS:
    globals()[_arch] = _builder(_arch)
