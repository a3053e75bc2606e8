"""torch.multiprocessing: `spawn` runs the first process only, in this process."""


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs `fn(0, *args)`: the stub follows one process."""
    fn(0, *args)


def set_start_method(method, force=False):
    """No-op."""
