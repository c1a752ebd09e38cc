"""The Dagster resource: where the segops service is and how to authenticate to it."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field
from segops_client import SegopsClient

__all__ = ["SegopsResource"]


class SegopsResource(ConfigurableResource):  # type: ignore[type-arg]
    """A ``segops serve`` service (one per Druid cluster).

    Example::

        SegopsResource(url="http://segops:7077", token=EnvVar("SEGOPS_API_TOKEN"))
    """

    url: str = Field(description="Base URL of `segops serve`, e.g. http://segops:7077")
    token: str | None = Field(
        default=None,
        description="The service's bearer token (`--api-token-file`); use EnvVar(...) to keep it out of code",
    )
    request_timeout: float = Field(
        default=30.0, description="Seconds to connect and for each ordinary request (long-polls add theirs)"
    )
    retries: int = Field(
        default=4,
        description="Tries again after connection errors and 408/429/502/503/504 (every call is idempotent)",
    )

    def get_client(self) -> SegopsClient:
        return SegopsClient(
            self.url,
            self.token,
            request_timeout=self.request_timeout,
            retries=self.retries,
            user_agent="dagster-segops",
        )
