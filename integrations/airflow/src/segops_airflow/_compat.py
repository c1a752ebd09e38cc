"""What the provider takes from Airflow, from where each supported version has it: Airflow 3 (the Task SDK,
`airflow.sdk`) and Airflow 2.10 (`airflow.models`, datasets instead of assets). Everything else imports
these names from here, so the difference between the two lives in this one module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow import __version__ as AIRFLOW_VERSION

#: The major version of the Airflow this runs under (2 or 3).
AIRFLOW_MAJOR = int(AIRFLOW_VERSION.split(".", 1)[0])
AIRFLOW_3 = AIRFLOW_MAJOR >= 3

if AIRFLOW_3 or TYPE_CHECKING:
    from airflow.sdk import (
        Asset,
        AssetAlias,
        BaseHook,
        BaseOperator,
        BaseSensorOperator,
        PokeReturnValue,
        conf,
    )
    from airflow.sdk.exceptions import (
        AirflowException,
        AirflowFailException,
        AirflowTaskTimeout,
    )
else:  # Airflow 2.10: datasets are what Airflow 3 renamed assets
    from airflow.configuration import conf
    from airflow.datasets import Dataset as Asset
    from airflow.datasets import DatasetAlias as AssetAlias
    from airflow.exceptions import (
        AirflowException,
        AirflowFailException,
        AirflowTaskTimeout,
    )
    from airflow.hooks.base import BaseHook
    from airflow.models import BaseOperator
    from airflow.sensors.base import BaseSensorOperator, PokeReturnValue

if TYPE_CHECKING:
    from airflow.sdk import Context
else:
    Context = dict[str, Any]


async def aget_connection(hook: Any, conn_id: str) -> Any:
    """The connection, read without blocking the triggerer's event loop (Airflow 2.10's hooks have no
    `aget_connection`: its blocking read runs in a thread)."""
    if AIRFLOW_3:
        return await hook.aget_connection(conn_id)
    from asgiref.sync import sync_to_async

    return await sync_to_async(hook.get_connection)(conn_id)


__all__ = [
    "AIRFLOW_3",
    "AIRFLOW_MAJOR",
    "AirflowException",
    "AirflowFailException",
    "AirflowTaskTimeout",
    "Asset",
    "AssetAlias",
    "BaseHook",
    "BaseOperator",
    "BaseSensorOperator",
    "Context",
    "PokeReturnValue",
    "aget_connection",
    "conf",
]
