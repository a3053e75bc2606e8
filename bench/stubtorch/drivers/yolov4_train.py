"""Runs PyTorch_YOLOv4's train.py as `__main__`, with data loading and evaluation replaced.

Run from the project's root under the stub torch. The run needs COCO
images, so the driver replaces, before train.py imports them:
create_dataloader (two synthetic batches), check_dataset, check_git_status,
the plotting functions, test.test (the mAP pass) and utils.loss.compute_loss
(which indexes real predictions). Everything else in train.py, including
select_device, the DDP block, the AMP scaler and autocast, runs as written.
Extra arguments are passed to train.py after the driver's own.
"""

import os
import runpy
import sys

import numpy as np
import torch

sys.path.insert(0, os.getcwd())

import test  # noqa: E402
import utils.datasets  # noqa: E402
import utils.general  # noqa: E402
import utils.loss  # noqa: E402
import utils.plots  # noqa: E402
from torch._tensor import Tensor  # noqa: E402  (the stub's)


class SyntheticDataset:
    """Two images with one label each."""

    labels = [np.array([[0, 0.5, 0.5, 0.1, 0.1]]), np.array([[1, 0.5, 0.5, 0.2, 0.2]])]
    n = 2

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return Tensor(shape=(3, 64, 64)), Tensor(shape=(1, 6)), f"img{i}.jpg", None


def collate(samples):
    """A batch as LoadImagesAndLabels.collate_fn builds it."""
    return Tensor(shape=(len(samples), 3, 64, 64)), Tensor(shape=(len(samples), 6)), [s[2] for s in samples], None


def create_dataloader(path, imgsz, batch_size, stride, opt, rank=-1, world_size=1, **kwargs):
    """The synthetic loader, with a DistributedSampler when a rank is set (as upstream)."""
    dataset = SyntheticDataset()
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if rank != -1 else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=2, sampler=sampler, collate_fn=collate)
    loader.sampler = sampler
    return loader, dataset


def fake_test(*args, **kwargs):
    """The results, maps and times test.test returns, all zero."""
    return (0, 0, 0, 0, 0, 0, 0), np.zeros(80), (0, 0, 0)


def fake_loss(pred, targets, model):
    """A loss and the four loss items, on the predictions' device."""
    return pred.sum(), Tensor(device=pred.device, shape=(4,))


utils.datasets.create_dataloader = create_dataloader
utils.general.check_dataset = lambda data_dict: None
utils.general.check_git_status = lambda: None
utils.loss.compute_loss = fake_loss
test.test = fake_test
for name in ("plot_images", "plot_labels", "plot_results", "plot_evolution"):
    setattr(utils.plots, name, lambda *args, **kwargs: None)

sys.argv = ["train.py", "--cfg", "cfg/yolov4.cfg", "--weights", "", "--data", "data/coco.yaml", "--epochs", "1",
            "--batch-size", "2", "--img-size", "64", "64", "--workers", "0", "--notest", "--nosave",
            "--project", os.environ.get("TMPDIR", "/tmp") + "/yolov4-runs"] + sys.argv[1:]
runpy.run_path("train.py", run_name="__main__")
