"""A stub of torchvision: fake datasets, identity transforms, models as stub modules."""

from torchvision import datasets, models, transforms  # noqa: F401

__version__ = "0.21.0+stub"
