"""Per-rank memory for data-parallel training with torch.distributed: DDP, ZeRO-1/2/3, FSDP2.

`estimate_per_rank` (before launch), `choose_sharding` (least sharding that fits), and
`validate_distributed` (a real torch.distributed job that measures each rank's peak).
"""
from memplan.workload import SHARDINGS
from memplan.distributed.estimate import RankEstimate, estimate_per_rank
from memplan.distributed.launch import DistValidation, validate_distributed
from memplan.distributed.plan import ShardingPlan, choose_sharding  # noqa: E402

__all__ = ["SHARDINGS", "RankEstimate", "estimate_per_rank", "DistValidation", "validate_distributed",
           "ShardingPlan", "choose_sharding"]
