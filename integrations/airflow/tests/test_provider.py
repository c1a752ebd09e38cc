"""The provider as Airflow discovers it: provider info against Airflow's own schema, the connection type,
the druid:// asset scheme, and the template helpers (the datasource a template states, the lineage names of
an input source; rendering a template is the service's, see test_hook.py)."""

from __future__ import annotations

import datetime as dt
import importlib
import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from segops_airflow._compat import AIRFLOW_3, Asset, AssetAlias
from segops_airflow.get_provider_info import get_provider_info
from segops_airflow.hooks.segops import SegopsHook, SegopsSettings
from segops_airflow.template import InputName, datasource_of, input_names

UTC = dt.timezone.utc


def test_provider_info_passes_airflows_schema() -> None:
    schema = json.loads(resources.files("airflow").joinpath("provider_info.schema.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    info = get_provider_info()
    assert [e.message for e in validator.iter_errors(info)] == []
    # The schema is permissive; the validator must still catch a broken entry (so the check can fail).
    broken = {**info, "triggers": [{"python-modules": "not a list"}]}
    assert list(validator.iter_errors(broken))


def test_every_path_in_provider_info_imports() -> None:
    info = get_provider_info()
    for section in ("operators", "sensors", "hooks", "triggers"):
        for entry in info[section]:
            for module in entry["python-modules"]:
                importlib.import_module(module)
    paths = [c["hook-class-name"] for c in info["connection-types"]]
    for uri in info["asset-uris"]:
        paths += [uri["handler"], uri["factory"], uri["to_openlineage_converter"]]
    for path in paths:
        module, _, name = path.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name)), path


def test_airflow_discovers_the_provider_through_its_entry_point() -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-segops" in manager.providers
    if AIRFLOW_3:  # the task runtime's own registry
        from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

        runtime: Any = ProvidersManagerTaskRuntime()
        handlers = runtime.asset_uri_handlers
    else:
        runtime = manager
        manager.initialize_providers_dataset_uri_resources()
        handlers = manager.dataset_uri_handlers
    hook = runtime.hooks["segops"]
    assert hook is not None
    assert hook.hook_class_name == "segops_airflow.hooks.segops.SegopsHook"
    assert hook.connection_id_attribute_name == "segops_conn_id"
    assert handlers["druid"].__module__ == "segops_airflow.assets.druid"
    assert (SegopsHook.conn_type, SegopsHook.default_conn_name) == ("segops", "segops_default")


def test_the_connection_form_is_the_one_airflows_ui_shows() -> None:
    """What the UI's connection form is built from: labels, placeholders and the extra fields, declared in
    provider info (Airflow 3's api-server's hook metadata; a generic form has no standard_fields), and
    the hook's field behaviour on Airflow 2.10 (its web server asks the hook)."""
    if not AIRFLOW_3:
        from airflow.providers_manager import ProvidersManager

        behaviour = ProvidersManager().field_behaviours["segops"]
        assert behaviour["hidden_fields"] == ["login"]
        assert behaviour["relabeling"]["host"] == "Service URL"
        assert behaviour["relabeling"]["password"] == "API token"
        return
    from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService

    (meta,) = [m for m in HookMetaService.hook_meta_data() if m.connection_type == "segops"]
    fields = meta.standard_fields
    assert fields is not None
    assert fields.login is not None
    assert fields.login.hidden
    assert fields.host is not None
    assert (fields.host.title, fields.host.placeholder) == ("Service URL", "http://segops.internal:7077")
    assert fields.password is not None
    assert fields.password.title == "API token"
    extra = meta.extra_fields or {}
    assert set(extra) == {"druid_host", "request_timeout", "poll_timeout", "verify"}
    assert extra["druid_host"]["schema"]["title"] == "Druid host in asset URIs"
    assert extra["poll_timeout"]["value"] == 60


def test_the_forms_extra_fields_are_read_as_the_connection_says_them() -> None:
    from airflow.models import Connection

    conn = Connection(
        conn_id="form",
        conn_type="segops",
        host="http://segops:7077",
        extra={"extra__segops__druid_host": "router:8888", "poll_timeout": "", "request_timeout": 12},
    )
    settings = SegopsSettings.from_connection(conn)
    assert (settings.druid_host, settings.poll_timeout, settings.request_timeout) == ("router:8888", 60, 12)
    bad = Connection(
        conn_id="bad", conn_type="segops", host="http://segops:7077", extra={"poll_timeout": "x"}
    )
    with pytest.raises(Exception, match="extra poll_timeout must be a positive number of seconds"):
        SegopsSettings.from_connection(bad)


def test_druid_asset_uris_are_normalized_and_checked() -> None:
    assert (
        Asset("druid://Router.Example:08888/wiki%20pedia/").uri == "druid://router.example:8888/wiki%20pedia"
    )
    for bad in ("druid:///wiki", "druid://router:8888/", "druid://router:8888/a/b"):
        if AIRFLOW_3:
            with pytest.raises(ValueError, match="druid://"):
                Asset(bad)
        else:  # Airflow 2.10 warns about a URI its scheme's handler refuses (unless strict validation)
            with pytest.warns(UserWarning, match="druid://"):
                Asset(bad)


def test_druid_asset_converts_to_an_openlineage_dataset() -> None:
    from segops_airflow.assets.druid import convert_asset_to_openlineage, create_asset

    asset = create_asset(host="http://Router:8888", datasource="wiki")
    assert asset.uri == "druid://router:8888/wiki"
    dataset = convert_asset_to_openlineage(Asset(asset.uri), None)
    assert (dataset.namespace, dataset.name) == ("druid://router:8888", "wiki")


class _Conn:
    def __init__(self, **kw: object) -> None:
        self.conn_id = "c"
        self.host = kw.get("host")
        self.port = kw.get("port")
        self.schema = kw.get("schema")
        self.password = kw.get("password")
        self.extra_dejson = kw.get("extra", {})


def test_connection_settings() -> None:
    s = SegopsSettings.from_connection(_Conn(host="https://segops.example/", password="secret-t"))
    assert (s.base_url, s.token, s.client().url) == (
        "https://segops.example",
        "secret-t",
        "https://segops.example",
    )
    assert "secret-t" not in repr(s)
    assert "secret-t" not in repr(s.client())
    s = SegopsSettings.from_connection(
        _Conn(
            host="segops",
            port=7077,
            extra={"druid_host": "router:8888", "vars": {"a": "1"}, "poll_timeout": 999},
        )
    )
    assert (s.base_url, s.token, s.druid_host, s.poll_timeout) == (
        "http://segops:7077",
        None,
        "router:8888",
        300,
    )
    assert s.defaults == {"vars": {"a": "1"}}
    assert "token" not in repr(s)
    with pytest.raises(Exception, match="no host"):
        SegopsSettings.from_connection(_Conn(host=""))


def test_datasource_from_the_template() -> None:
    spec = {"type": "index_parallel", "spec": {"dataSchema": {"dataSource": "wiki"}}}
    assert datasource_of(spec) == "wiki"
    assert datasource_of(json.dumps(spec)) == "wiki"
    assert datasource_of("type: index_parallel\nspec:\n  dataSchema:\n    dataSource: wiki\n") == "wiki"
    assert datasource_of({"spec": {"dataSchema": {"dataSource": "{{var.ds}}"}}}) is None
    assert datasource_of("REPLACE INTO wiki OVERWRITE ALL SELECT 1") is None


def test_lineage_names_of_rendered_input_sources() -> None:
    combining = {
        "type": "combining",
        "delegates": [
            {"type": "local", "baseDir": "/data", "filter": "events-2026-01-01.json"},
            {"type": "s3", "prefixes": ["s3://bucket/2026/01/01/"]},
            {"type": "druid", "dataSource": "other", "interval": "2026-01-01/2026-01-02"},
            {"type": "http", "uris": ["https://example.com/a.json"]},
        ],
    }
    assert sorted(input_names(combining, "druid://router:8888")) == [
        InputName("druid://router:8888", "other"),
        InputName("file", "/data/events-2026-01-01.json"),
        InputName("https://example.com", "a.json"),
        InputName("s3://bucket", "2026/01/01/"),
    ]


def test_an_empty_data_interval_is_refused_before_anything_is_sent() -> None:
    from segops_airflow.operators.segops import SegopsBackfillOperator, SegopsIngestOperator

    template = {"type": "index_parallel", "spec": {"dataSchema": {"dataSource": "wiki"}}}
    op = SegopsIngestOperator(
        task_id="t", template=template, interval="2026-01-01T00:00:00+00:00/2026-01-01T00:00:00+00:00"
    )
    with pytest.raises(ValueError, match="CronDataIntervalTimetable"):
        op.request_body()
    backfill = SegopsBackfillOperator(task_id="b", template=template, start="2026-01-01", end="2026-01-01")
    with pytest.raises(ValueError, match="CronDataIntervalTimetable"):
        backfill.request_body()
    with pytest.raises(ValueError, match="unknown gate"):
        SegopsIngestOperator(task_id="g", template=template, gates={"min_row": 1})


def test_the_druid_asset_is_declared_when_the_host_is_known() -> None:
    from segops_airflow.operators.segops import SegopsIngestOperator

    template = {"type": "index_parallel", "spec": {"dataSchema": {"dataSource": "wiki"}}}
    declared = SegopsIngestOperator(task_id="d", template=template, druid_host="Router:8888")
    assert [o.uri for o in declared.outlets if isinstance(o, Asset)] == ["druid://router:8888/wiki"]
    assert not [o for o in declared.outlets if isinstance(o, AssetAlias)]
    aliased = SegopsIngestOperator(task_id="a", template=template)
    assert [o.name for o in aliased.outlets if isinstance(o, AssetAlias)] == ["segops:wiki"]
    mine = Asset("druid://other-name/wiki")
    given = SegopsIngestOperator(task_id="g", template=template, outlets=[mine], druid_host="router:8888")
    assert given.outlets == [mine]
