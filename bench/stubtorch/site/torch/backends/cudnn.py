"""torch.backends.cudnn, the same namespace as torch.backends.cudnn."""

benchmark = False
deterministic = False
enabled = True
