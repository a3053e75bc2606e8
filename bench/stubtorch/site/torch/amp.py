"""torch.amp."""

from torch._amp import GradScaler, autocast  # noqa: F401
