"""Run the real training loop on a device, measure its memory, compare with the estimate."""
