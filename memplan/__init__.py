"""memplan: memory planner and OOM diagnostic analyzer for PyTorch training."""
__version__ = "0.1.0"
