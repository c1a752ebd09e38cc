"""What Airflow's ProvidersManager reads through the `apache_airflow_provider` entry point."""

from __future__ import annotations

from typing import Any

from segops_airflow import __version__

INTEGRATION = "segops"


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "airflow-provider-segops",
        "name": "segops",
        "description": "Idempotent, deferrable Apache Druid ingestion and backfills through `segops serve`: "
        "deterministic Druid task ids (a retry reattaches), handoff and version audit, Druid's errorMsg "
        "and row counters on failure, asset events and OpenLineage facets for the datasource.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": INTEGRATION,
                "external-doc-url": "https://pypi.org/project/airflow-provider-segops/",
                "tags": ["service"],
            }
        ],
        "operators": [
            {"integration-name": INTEGRATION, "python-modules": ["segops_airflow.operators.segops"]}
        ],
        "sensors": [{"integration-name": INTEGRATION, "python-modules": ["segops_airflow.sensors.segops"]}],
        "hooks": [{"integration-name": INTEGRATION, "python-modules": ["segops_airflow.hooks.segops"]}],
        "triggers": [{"integration-name": INTEGRATION, "python-modules": ["segops_airflow.triggers.segops"]}],
        "connection-types": [
            {
                "connection-type": "segops",
                "hook-class-name": "segops_airflow.hooks.segops.SegopsHook",
                "hook-name": "segops",
            }
        ],
        "asset-uris": [
            {
                "schemes": ["druid"],
                "handler": "segops_airflow.assets.druid.sanitize_uri",
                "factory": "segops_airflow.assets.druid.create_asset",
                "to_openlineage_converter": "segops_airflow.assets.druid.convert_asset_to_openlineage",
            }
        ],
    }
