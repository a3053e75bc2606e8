"""torchvision.datasets: every dataset yields (image tensor, label) pairs; none reads files."""

from torch._tensor import Tensor
from torch.utils.data import Dataset


class FakeData(Dataset):
    """`FakeData(size, image_size, num_classes, transform)`."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, **kwargs):
        self.size, self.image_size, self.transform = size, tuple(image_size), transform
        self.classes = list(range(num_classes))

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        image = Tensor(shape=self.image_size)
        return (self.transform(image) if self.transform else image), 0


class ImageFolder(FakeData):
    """`ImageFolder(root, transform)`: eight fake images, whatever the folder holds."""

    def __init__(self, root, transform=None, **kwargs):
        super().__init__(8, (3, 224, 224), 2, transform)
        self.root = root


def __getattr__(name):
    if name.startswith("__") or not name[:1].isupper():
        raise AttributeError(name)
    return FakeData
