"""torch.utils.data: a DataLoader that yields a few stub batches and records pin_memory_device."""

import os

from torch._device import targeted
from torch._tensor import Tensor


class Dataset:
    """The dataset base class."""


IterableDataset = Dataset


class Subset(Dataset):
    """A subset of a dataset by indices."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        return self.dataset[self.indices[i]]


def _collate(samples):
    first = samples[0]
    if isinstance(first, (tuple, list)):
        return [_collate([s[i] for s in samples]) for i in range(len(first))]
    if isinstance(first, dict):
        return {k: _collate([s[k] for s in samples]) for k in first}
    return Tensor(shape=(len(samples),) + (first.shape if isinstance(first, Tensor) else ()))


class DataLoader:
    """Yields at most STUBTORCH_BATCHES (default 2) batches collated from the dataset's first items."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, pin_memory_device="", **kwargs):
        targeted(pin_memory_device or None, "DataLoader pin_memory_device")
        self.dataset, self.batch_size, self.sampler = dataset, batch_size or 1, sampler
        self.num_workers, self.collate_fn = num_workers, collate_fn or _collate

    def __len__(self):
        return min(int(os.environ.get("STUBTORCH_BATCHES", "2")), max(1, len(self.dataset) // self.batch_size))

    def __iter__(self):
        n = min(self.batch_size, len(self.dataset)) or 1
        for _ in range(len(self)):
            yield self.collate_fn([self.dataset[i] for i in range(n)])


def random_split(dataset, lengths, generator=None):
    """Splits by position."""
    start, parts = 0, []
    for length in lengths:
        parts.append(Subset(dataset, range(start, start + length)))
        start += length
    return parts


def default_collate(samples):
    """Collates samples into stub tensors."""
    return _collate(samples)


# Imported last: they refer to the classes above.
from torch.utils.data import dataloader, distributed  # noqa: E402,F401
from torch.utils.data.distributed import DistributedSampler  # noqa: E402,F401
