"""What the provider reads from a segops template on the Python side: the datasource (for the asset and
OpenLineage output) and the input sources of each partition (for OpenLineage inputs).

segops renders and validates templates itself (the service does, for every request); this module only
renders the placeholders of the *input source* strings, to name lineage inputs — see docs/specs.md of
segops for the placeholders: `{{interval}}`, `{{start}}`, `{{end}}`, `{{start:FORMAT}}`, `{{end:FORMAT}}`,
`{{var.NAME}}`, `{{'text'}}`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

Template = Mapping[str, Any] | str

_PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
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


def parse_instant(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc)


def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


_LETTERS = {
    "y": lambda t: t.year,
    "M": lambda t: t.month,
    "d": lambda t: t.day,
    "H": lambda t: t.hour,
    "m": lambda t: t.minute,
    "s": lambda t: t.second,
    "S": lambda t: t.microsecond // 1000,
    "o": lambda t: t.timetuple().tm_yday,
    "W": lambda t: t.isocalendar()[1],
    "k": lambda t: t.isocalendar()[0],
}


def format_instant(t: dt.datetime, fmt: str) -> str:
    """segops' date formats: runs of y M d H m s S o W k, zero-padded to the run's length; 'quoted' text."""
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "'":
            end = fmt.find("'", i + 1)
            if end == -1:
                raise ValueError(f"unclosed quote in date format {fmt!r}")
            out.append("'" if end == i + 1 else fmt[i + 1 : end])
            i = end + 1
            continue
        j = i
        while j < len(fmt) and fmt[j] == ch:
            j += 1
        run = j - i
        if ch in _LETTERS:
            value = _LETTERS[ch](t)
            if ch in "yk" and run == 2:
                out.append(f"{value % 100:02d}")
            else:
                out.append(str(value).zfill(run))
        elif ch.isalpha():
            raise ValueError(f"date format {fmt!r} uses {ch!r}")
        else:
            out.append(fmt[i:j])
        i = j
    return "".join(out)


def render(text: str, start: dt.datetime, end: dt.datetime, variables: Mapping[str, str]) -> str:
    """The placeholders of one string, rendered for the partition [start, end)."""

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        if len(body) >= 2 and body[0] == body[-1] and body[0] in "'\"":
            return body[1:-1]
        if body == "interval":
            return f"{_iso(start)}/{_iso(end)}"
        if body in ("start", "end"):
            return _iso(start if body == "start" else end)
        if body.startswith(("start:", "end:")):
            which, _, fmt = body.partition(":")
            return format_instant(start if which == "start" else end, fmt)
        if body.startswith("var."):
            name = body[4:]
            if name not in variables:
                raise KeyError(f"missing variable {{{{var.{name}}}}}")
            return str(variables[name])
        raise KeyError(f"unknown placeholder {{{{{body}}}}}")

    return _PLACEHOLDER.sub(one, text)


def _render_value(value: Any, start: dt.datetime, end: dt.datetime, variables: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return render(value, start, end, variables)
    if isinstance(value, list):
        return [_render_value(v, start, end, variables) for v in value]
    if isinstance(value, Mapping):
        return {k: _render_value(v, start, end, variables) for k, v in value.items()}
    return value


@dataclass(frozen=True, order=True)
class InputName:
    """An OpenLineage dataset name: namespace (e.g. `file`, `s3://bucket`) and name (a path)."""

    namespace: str
    name: str


def input_source(template: Template) -> Mapping[str, Any] | None:
    parsed = parse_template(template)
    if parsed is None:
        return None
    io = _ingestion_spec(parsed).get("ioConfig")
    src = io.get("inputSource") if isinstance(io, Mapping) else None
    return src if isinstance(src, Mapping) else None


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


def partition_inputs(
    template: Template,
    intervals: list[str],
    variables: Mapping[str, str],
    druid_namespace: str | None = None,
) -> list[InputName]:
    """Every dataset the partitions over `intervals` read, rendered per partition, sorted, deduplicated."""
    src = input_source(template)
    if src is None:
        return []
    names: set[InputName] = set()
    for interval in intervals:
        start_text, _, end_text = interval.partition("/")
        start, end = parse_instant(start_text), parse_instant(end_text)
        try:
            rendered = _render_value(src, start, end, variables)
        except (KeyError, ValueError):
            continue
        names.update(input_names(rendered, druid_namespace))
    return sorted(names)
