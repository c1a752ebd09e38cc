"""What the provider reads from a segops template on the Python side: the datasource it states literally
(for the asset, declared when the DAG is parsed), and the OpenLineage names of a Druid input source.

segops renders and validates templates itself: the input sources a job's partitions read come from the
service (`POST /api/v1/runs/plan` or `/backfills/plan`, each partition's input sources rendered), never
from rendering the placeholders here.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

Template = Mapping[str, Any] | str

_SQL = re.compile(r"^\s*(--[^\n]*\n\s*)*(REPLACE|INSERT)\b", re.IGNORECASE)


def parse_template(template: Template) -> dict[str, Any] | None:
    """The template as an object (JSON or YAML text parsed); None for SQL templates or unreadable text."""
    if isinstance(template, Mapping):
        return dict(template)
    if _SQL.match(template):
        return None
    try:
        value = json.loads(template) if template.lstrip().startswith("{") else yaml.safe_load(template)
    except (ValueError, yaml.YAMLError):
        return None
    return value if isinstance(value, dict) else None


def _ingestion_spec(template: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = template.get("spec")
    return spec if isinstance(spec, Mapping) else template


def datasource_of(template: Template) -> str | None:
    """`spec.dataSchema.dataSource` when the template states it literally (no placeholder in it)."""
    parsed = parse_template(template)
    if parsed is None:
        return None
    schema = _ingestion_spec(parsed).get("dataSchema")
    ds = schema.get("dataSource") if isinstance(schema, Mapping) else None
    if isinstance(ds, str) and ds and "{{" not in ds:
        return ds
    return None


@dataclass(frozen=True, order=True)
class InputName:
    """An OpenLineage dataset name: namespace (e.g. `file`, `s3://bucket`) and name (a path)."""

    namespace: str
    name: str


def _url_name(url: str) -> InputName:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("", "file"):
        return InputName("file", parts.path)
    return InputName(f"{parts.scheme}://{parts.netloc}", parts.path.lstrip("/") or "/")


def _cloud_names(src: Mapping[str, Any], scheme: str) -> list[InputName]:
    names = [_url_name(u) for key in ("uris", "prefixes") for u in src.get(key) or [] if isinstance(u, str)]
    for obj in src.get("objects") or []:
        if isinstance(obj, Mapping) and obj.get("bucket"):
            names.append(InputName(f"{scheme}://{obj['bucket']}", str(obj.get("path", "")).lstrip("/")))
    return names


def input_names(src: Mapping[str, Any], druid_namespace: str | None = None) -> list[InputName]:
    """The datasets an (already rendered) Druid input source reads."""
    kind = src.get("type")
    if kind == "local":
        names = [InputName("file", str(f)) for f in src.get("files") or []]
        base = src.get("baseDir")
        if base:
            flt = src.get("filter")
            names.append(InputName("file", f"{str(base).rstrip('/')}/{flt}" if flt else str(base)))
        return names
    if kind in ("s3", "google", "azure", "azureStorage", "oss"):
        scheme = {"google": "gs", "azure": "azure", "azureStorage": "azure", "oss": "oss"}.get(kind, "s3")
        return _cloud_names(src, scheme)
    if kind == "hdfs":
        paths = src.get("paths")
        items = paths if isinstance(paths, list) else str(paths or "").split(",")
        return [_url_name(p.strip()) for p in items if isinstance(p, str) and p.strip()]
    if kind == "http":
        return [_url_name(u) for u in src.get("uris") or [] if isinstance(u, str)]
    if kind == "druid" and src.get("dataSource") and druid_namespace:
        return [InputName(druid_namespace, str(src["dataSource"]))]
    if kind == "combining":
        out: list[InputName] = []
        for delegate in src.get("delegates") or []:
            if isinstance(delegate, Mapping):
                out.extend(input_names(delegate, druid_namespace))
        return out
    return []
