"""torch.distributed: one process; `init_process_group` records the device its backend serves."""

import stubrec

BACKEND_DEVICE = {"nccl": "cuda", "hccl": "npu", "gloo": "cpu", "mpi": "cpu"}
_group = {"initialized": False}


def is_available():
    """Always True."""
    return True


def is_initialized():
    """Whether init_process_group ran."""
    return _group["initialized"]


def init_process_group(backend=None, init_method=None, **kwargs):
    """Records the backend's device type (nccl: cuda, hccl: npu, gloo: cpu)."""
    stubrec.record(BACKEND_DEVICE.get(str(backend), None), "dist.init_process_group", f"backend={backend!r}")
    _group["initialized"] = True


def get_rank(group=None):
    """Rank 0."""
    return 0


def get_world_size(group=None):
    """One process."""
    return 1


def destroy_process_group(group=None):
    """Ends the group."""
    _group["initialized"] = False


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name[:1].isupper():
        return stubrec.Anything()
    return lambda *args, **kwargs: None
