"""lazyvi-torch: a lazyvi backend plugin serving PyTorch networks over the
backend protocol of lazyvi's internal/pb (see docs/torch.md)."""
