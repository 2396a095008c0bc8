"""DeepSpeed training loop shared by every paper."""
