"""What Airflow's ProvidersManager reads through the `apache_airflow_provider` entry point."""

from __future__ import annotations

from typing import Any

from segops_airflow import __version__

INTEGRATION = "segops"

#: The connection form, declared (Airflow ≥ 3.2 reads it here without importing the hook; older versions
#: ask `SegopsHook.get_ui_field_behaviour`, which says the same). Extra fields are stored in the
#: connection's extra under their own names, where `SegopsSettings` reads them.
UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden-fields": ["login"],
    "relabeling": {
        "host": "Service URL",
        "password": "API token",
        "schema": "Scheme (bare host only)",
    },
    "placeholders": {
        "host": "http://segops.internal:7077",
        "password": "the token segops serve reads from --api-token-file",
        "schema": "http",
        "extra": '{"vars": {"dataDir": "/data"}, "min_rows": 1}',
    },
}
CONN_FIELDS: dict[str, Any] = {
    "druid_host": {
        "label": "Druid host in asset URIs",
        "description": "host[:port] of druid://<host>/<datasource> assets (default: the job's Overlord host)",
        "schema": {"type": ["string", "null"]},
    },
    "request_timeout": {
        "label": "Request timeout (s)",
        "description": "seconds one HTTP request to the service may take",
        "schema": {"type": ["number", "null"], "default": 30, "minimum": 1},
    },
    "poll_timeout": {
        "label": "Long-poll timeout (s)",
        "description": "seconds one long-poll of a job waits (at most 300)",
        "schema": {"type": ["number", "null"], "default": 60, "minimum": 1, "maximum": 300},
    },
    "verify": {
        "label": "TLS verification",
        "description": "true, false, or the path of a CA bundle",
        "schema": {"type": ["string", "null"], "default": "true"},
    },
}


#: The `druid://` URI scheme: its normalizer, its factory and its OpenLineage converter.
DRUID_URIS: list[dict[str, Any]] = [
    {
        "schemes": ["druid"],
        "handler": "segops_airflow.assets.druid.sanitize_uri",
        "factory": "segops_airflow.assets.druid.create_asset",
        "to_openlineage_converter": "segops_airflow.assets.druid.convert_asset_to_openlineage",
    }
]


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
                "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
                "conn-fields": CONN_FIELDS,
            }
        ],
        # Airflow 3 reads asset-uris; Airflow 2.10, which called assets datasets, reads dataset-uris.
        "asset-uris": DRUID_URIS,
        "dataset-uris": DRUID_URIS,
    }
