"""torch.backends: cudnn flags are plain attributes."""

from torch.backends import cudnn  # noqa: F401
