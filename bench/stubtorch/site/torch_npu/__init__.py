"""A stub of torch_npu: importable on the NPU host only (and on the `cuda-npulib` host, see stubrec).

Importing it adds torch.npu, Tensor.npu/is_npu and Module.npu, as the real
package does, and the fused optimizers under torch_npu.optim.
"""

import stubrec

if stubrec.HOST == "cuda":
    raise ImportError("stubtorch: torch_npu is not installed on a CUDA host")

import torch  # noqa: E402
from torch._devapi import make_device_module  # noqa: E402
from torch_npu import optim  # noqa: E402,F401

stubrec.mark_torch_npu_imported()
torch.npu = make_device_module("npu")
