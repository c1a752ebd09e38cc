"""dagster-segops: Dagster partitioned assets ingested into Apache Druid by segops.

Materialising a partition key runs one segops run over its time window (a single-run backfill of many
keys: one segops backfill), idempotent on retry, with Druid's task ids, version and row counters as
materialisation metadata and blocking asset checks from segops' gates.
"""

import importlib.metadata

from segops_client import SegopsApiError, SegopsClient

from .asset import (
    CHECK_HANDOFF,
    CHECK_LIVE_VERSION,
    CHECK_ROW_QUALITY,
    JobView,
    SegopsAssetConfig,
    segops_partitioned_asset,
    upstream_source_version,
)
from .granularity import GranularityMismatch, granularity_for_windows
from .resource import SegopsResource

try:
    __version__ = importlib.metadata.version("dagster-segops")
except importlib.metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "CHECK_HANDOFF",
    "CHECK_LIVE_VERSION",
    "CHECK_ROW_QUALITY",
    "GranularityMismatch",
    "JobView",
    "SegopsApiError",
    "SegopsAssetConfig",
    "SegopsClient",
    "SegopsResource",
    "granularity_for_windows",
    "segops_partitioned_asset",
    "upstream_source_version",
]
