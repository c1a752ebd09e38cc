"""The `druid` asset URI scheme: `druid://<router-host>[:port]/<datasource>`.

One asset per Druid datasource of one cluster. The host is the cluster's Router (or whatever name the team
uses for it, e.g. the `druid_host` extra of the segops connection); the path is the datasource, percent-
encoded (a Druid datasource name cannot contain `/`). Registered with Airflow through the provider's
`asset-uris` (handler, factory and OpenLineage converter).
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from segops_airflow._compat import Asset

if TYPE_CHECKING:
    from urllib.parse import SplitResult

SCHEME = "druid"


def _normalize_host(netloc: str) -> str:
    host, sep, port = netloc.rpartition(":")
    if sep and port.isdigit() and "]" not in port:
        return f"{host.lower()}:{int(port)}"
    return netloc.lower()


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Airflow's normalizer for `druid://` URIs: a host and exactly one path segment (the datasource)."""
    if not uri.netloc:
        raise ValueError("A druid:// asset URI needs the cluster's host: druid://<router-host>/<datasource>")
    segments = [s for s in uri.path.split("/") if s]
    if len(segments) != 1:
        raise ValueError(
            f"A druid:// asset URI names one datasource: druid://<router-host>/<datasource>, got path {uri.path!r}"
        )
    if uri.query:
        raise ValueError("A druid:// asset URI takes no query string")
    datasource = urllib.parse.unquote(segments[0])
    return uri._replace(
        netloc=_normalize_host(uri.netloc), path="/" + urllib.parse.quote(datasource, safe=""), query=""
    )


def druid_asset_uri(host: str, datasource: str) -> str:
    """`druid://host/datasource`, normalized as Airflow will store it. `host` may be a URL."""
    if "://" in host:
        host = urllib.parse.urlsplit(host).netloc
    if not host:
        raise ValueError("the Druid host must not be empty")
    if not datasource or "/" in datasource:
        raise ValueError(f"not a Druid datasource name: {datasource!r}")
    return f"{SCHEME}://{_normalize_host(host)}/{urllib.parse.quote(datasource, safe='')}"


def create_asset(*, host: str, datasource: str, extra: dict[str, Any] | None = None) -> Asset:
    """The asset of `datasource` on the Druid cluster at `host` (the provider's asset factory)."""
    return Asset(uri=druid_asset_uri(host, datasource), extra=extra or {})


def split_druid_uri(uri: str) -> tuple[str, str]:
    """(host, datasource) of a `druid://` URI."""
    parsed = urllib.parse.urlsplit(uri)
    if parsed.scheme != SCHEME:
        raise ValueError(f"not a druid:// URI: {uri!r}")
    sanitized = sanitize_uri(parsed)
    return sanitized.netloc, urllib.parse.unquote(sanitized.path.lstrip("/"))


def convert_asset_to_openlineage(asset: Asset, lineage_context: Any) -> Any:
    """The OpenLineage dataset of a `druid://` asset: namespace `druid://host`, name the datasource."""
    from airflow.providers.common.compat.openlineage.facet import Dataset as OpenLineageDataset

    host, datasource = split_druid_uri(asset.uri)
    return OpenLineageDataset(namespace=f"{SCHEME}://{host}", name=datasource)
