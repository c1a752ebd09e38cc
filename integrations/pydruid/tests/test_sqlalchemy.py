"""SQLAlchemy Core through pydruid's `druid://` dialect (Broker SQL, POST /druid/v2/sql/) against the emulator:
reflection through INFORMATION_SCHEMA, then selects SQLAlchemy compiles with table-qualified columns."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, MetaData, Table, create_engine, func, inspect, select


@pytest.fixture
def engine(sim_url: str, datasource: str) -> Engine:
    where = urlsplit(sim_url)
    return create_engine(f"druid://{where.hostname}:{where.port}/druid/v2/sql/")


@pytest.fixture
def table(engine: Engine, datasource: str) -> Table:
    return Table(datasource, MetaData(), autoload_with=engine)


def test_reflection_lists_the_datasource_and_its_columns(engine: Engine, table: Table, datasource: str) -> None:
    assert datasource in inspect(engine).get_table_names()
    assert [c.name for c in table.columns] == ["__time", "channel", "page", "added", "delta"]
    # pydruid maps INFORMATION_SCHEMA.COLUMNS.JDBC_TYPE to SQLAlchemy's types.
    assert [type(c.type).__name__ for c in table.columns] == ["TIMESTAMP", "String", "String", "BigInteger", "Float"]


def test_count_per_channel_where_grouped(engine: Engine, table: Table) -> None:
    query = (
        select(table.c.channel, func.count())
        .where(table.c.added > 20)
        .group_by(table.c.channel)
        .order_by(table.c.channel)
    )
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(query)] == [(None, 4), ("#de", 4), ("#en", 2), ("#fr", 2)]


def test_select_with_a_limit(engine: Engine, table: Table) -> None:
    query = select(table.c.page, table.c.added).where(table.c.channel == "#en").limit(3)
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(query)] == [("p0", 10), ("p1", 50), ("p0", 10)]
