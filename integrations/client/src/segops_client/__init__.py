"""Python client of the segops service (`segops serve`), generated from its OpenAPI document.

:class:`SegopsClient` (blocking) and :class:`AsyncSegopsClient` have one method per operation
(``get_job``, ``create_run``, ``wait_for_job``, …: ``_operations.py``, generated), taking and returning
the API's JSON as the TypedDicts of :mod:`segops_client.models` (generated), and a few methods every caller
needs on top (``create``, ``whole_job``, ``wait_until_ended``, ``plan``, ``gates``). Problems are raised
as :class:`SegopsApiError`.
"""

from importlib.metadata import PackageNotFoundError, version

from . import models
from ._call import Answered
from ._transport import (
    BUSY_PROBLEM,
    MAX_WAIT,
    PARTITION_PAGE,
    RETRYABLE_STATUSES,
    AsyncSegopsClient,
    Backoff,
    SegopsApiError,
    SegopsClient,
    job_ended,
    problem_message,
)

try:
    __version__ = version("segops-client")
except PackageNotFoundError:  # a source tree without metadata
    __version__ = "0.0.0"

__all__ = [
    "BUSY_PROBLEM",
    "MAX_WAIT",
    "PARTITION_PAGE",
    "RETRYABLE_STATUSES",
    "Answered",
    "AsyncSegopsClient",
    "Backoff",
    "SegopsApiError",
    "SegopsClient",
    "__version__",
    "job_ended",
    "models",
    "problem_message",
]
