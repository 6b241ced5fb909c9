"""lazyvi-torch: a lazyvi backend plugin serving PyTorch networks over the
backend protocol of lazyvi's proto/lazyvi/backend/v2 (see docs/torch.md)."""
