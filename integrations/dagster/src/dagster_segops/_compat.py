"""What differs between the Dagster versions this package supports (1.10 to 1.13), read off the installed
Dagster's own signatures rather than its version number.

Partitioned asset checks (``AssetCheckSpec(partitions_def=)``, ``AssetCheckEvaluation(partition=)``) came
in Dagster 1.12: before them a check of a partitioned asset has one result per step, not one per key.
"""

import inspect
from typing import Any

from dagster import AssetCheckEvaluation, AssetCheckSpec

__all__ = ["PARTITIONED_CHECKS", "check_partition"]

#: Whether checks can belong to a partition key (Dagster 1.12+).
PARTITIONED_CHECKS = "partitions_def" in inspect.signature(AssetCheckSpec).parameters and (
    "partition" in inspect.signature(AssetCheckEvaluation).parameters
)


def check_partition(evaluation: Any) -> str | None:
    """The partition key a check evaluation belongs to (None before partitioned checks, or for none)."""
    partition = getattr(evaluation, "partition", None)
    return str(partition) if partition is not None else None
