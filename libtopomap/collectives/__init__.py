"""Collective-aware rank placement (Cui 2024): schedules, objectives, allocations, optimizers."""

from .schedules import (COLLECTIVES, binomial_bcast, bruck_alltoall, check_schedule, recursive_doubling_allreduce,
                        ring_allgather, schedule, schedule_graph)

__all__ = ["COLLECTIVES", "schedule", "schedule_graph", "check_schedule", "binomial_bcast",
           "recursive_doubling_allreduce", "bruck_alltoall", "ring_allgather"]
