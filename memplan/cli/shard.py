"""`memplan shard estimate|plan|validate`: data-parallel per-rank memory (memplan.distributed)."""
from memplan.distributed.cli import command  # noqa: F401
