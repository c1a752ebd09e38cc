"""Apache Airflow provider for segops (Segment Ops for Apache Druid).

Operators create segops runs and backfills through `segops serve` (same inputs → same job, so an Airflow
retry reattaches instead of ingesting twice) and defer to a trigger that long-polls the service.
"""

from __future__ import annotations

import importlib.metadata

try:
    __version__ = importlib.metadata.version("airflow-provider-segops")
except importlib.metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
