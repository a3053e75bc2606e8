"""torch.utils.data.dataloader: where DataLoader is defined upstream."""

from torch.utils.data import DataLoader  # noqa: F401
