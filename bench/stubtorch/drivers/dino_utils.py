"""Calls DINO's `utils.PCA.apply`, which the unsafe fix changes and main_dino.py does not reach.

`PCA.apply` is used by the retrieval evaluations; the unsafe fix renames its
`is_cuda` branch and the `torch.cuda.FloatTensor` calls in it. The input is
a tensor on the host's accelerator, found as the program would: torch.cuda
if available, else torch_npu. (`MultiCropWrapper.forward`, whose
`torch.empty(0).to(device)` the safe fix rewrites, is not run: its crop
indices come from tensor values, which the stub does not hold.)
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.getcwd())

import utils  # noqa: E402  (DINO's utils.py)

try:
    import torch_npu  # noqa: F401
except ImportError:
    pass

if torch.cuda.is_available():
    device = torch.device("cuda")
elif hasattr(torch, "npu") and torch.npu.is_available():
    device = torch.device("npu")
else:
    device = torch.device("cpu")

pca = utils.PCA(dim=2)
pca.mean, pca.dvt = np.zeros(2, dtype=np.float32), np.eye(2, dtype=np.float32)
pca.apply(torch.zeros(4, 2, device=device))
