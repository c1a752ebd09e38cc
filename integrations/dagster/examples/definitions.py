"""Daily Druid ingestion as a partitioned Dagster asset, through segops.

export SEGOPS_URL=http://127.0.0.1:7077 SEGOPS_API_TOKEN=... EVENTS_DATA_DIR=/data/events
dagster asset materialize -f definitions.py --select events --partition 2026-01-01
dagster asset materialize -f definitions.py --select events --partition-range 2026-01-01...2026-01-31
"""

import os
import warnings

import dagster as dg

from dagster_segops import SegopsResource, segops_partitioned_asset

daily = dg.DailyPartitionsDefinition(start_date="2026-01-01", timezone="UTC")

events = segops_partitioned_asset(
    name="events",
    partitions_def=daily,
    # An index_parallel spec with segops placeholders; its segmentGranularity buckets as `daily` does.
    template={
        "type": "index_parallel",
        "spec": {
            "dataSchema": {
                "dataSource": os.environ.get("EVENTS_DATASOURCE", "events"),
                "timestampSpec": {"column": "ts", "format": "iso"},
                "dimensionsSpec": {"dimensions": ["channel", "page"]},
                "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "none", "rollup": False},
            },
            "ioConfig": {
                "type": "index_parallel",
                "inputSource": {
                    "type": "local",
                    "baseDir": "{{var.dataDir}}",
                    "filter": "events-{{start:yyyy-MM-dd}}.json",
                },
                "inputFormat": {"type": "json"},
                "dropExisting": True,
            },
            "tuningConfig": {"type": "index_parallel", "partitionsSpec": {"type": "dynamic"}},
        },
    },
    vars={"dataDir": os.environ.get("EVENTS_DATA_DIR", "/data/events")},
    min_rows=1,  # an empty day is a failure, not a success
    max_unparseable=0,  # one unparseable row fails the day (Druid stops at once)
    pool="druid",  # `dagster instance concurrency set druid N`: N from Druid's worker slots
    group_name="druid",
)


# Dagster marks `backfill_policy` beta and would print a BetaWarning on every command; single-run is what
# lets a range of the report run in the same run as its segops backfill.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=r"Parameter `backfill_policy`")


@dg.asset(
    partitions_def=daily,
    deps=[events],
    group_name="druid",
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def events_report() -> None:
    """Runs only when the day's blocking checks (handoff, one live version, row quality) passed."""


defs = dg.Definitions(
    assets=[events, events_report],
    resources={
        "segops": SegopsResource(
            url=os.environ.get("SEGOPS_URL", "http://127.0.0.1:7077"),
            token=dg.EnvVar("SEGOPS_API_TOKEN"),
        )
    },
)
