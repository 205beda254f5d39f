"""Plans that fit: batch size, gradient accumulation, activation checkpointing, allocator and optimizer
settings, each re-traced before it is offered (`plan(...) -> Plan`)."""
from memplan.plan.change import Change
from memplan.plan.planner import Plan, plan

__all__ = ["Change", "Plan", "plan"]
