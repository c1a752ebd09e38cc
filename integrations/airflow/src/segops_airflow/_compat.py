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
        TaskDeferralTimeout,
    )
else:  # Airflow 2.10: datasets are what Airflow 3 renamed assets
    from airflow.configuration import conf
    from airflow.datasets import Dataset as Asset
    from airflow.datasets import DatasetAlias as AssetAlias
    from airflow.exceptions import (
        AirflowException,
        AirflowFailException,
        AirflowTaskTimeout,
        TaskDeferralTimeout,
    )
    from airflow.hooks.base import BaseHook
    from airflow.models import BaseOperator
    from airflow.sensors.base import BaseSensorOperator, PokeReturnValue

if TYPE_CHECKING:
    from airflow.sdk import Context
else:
    Context = dict[str, Any]

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
    "TaskDeferralTimeout",
    "conf",
]
