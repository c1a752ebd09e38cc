"""SQLAlchemy Core through pydruid's `druid://` dialect (Broker SQL, POST /druid/v2/sql/) against the emulator:
reflection through INFORMATION_SCHEMA, then selects SQLAlchemy compiles with table-qualified columns, the shapes a
dashboard tool sends. The expected rows are what a real Druid 33 answered.

Not here: a comparison with a Python datetime, which pydruid 0.6.9 renders as `None` (a real Druid refuses the SQL).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, MetaData, Table, create_engine, desc, func, inspect, literal_column, select


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


def rows(engine: Engine, query) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(query)]


def test_a_labelled_sum_ordered_by_its_label_descending(engine: Engine, table: Table) -> None:
    query = select(table.c.page, func.sum(table.c.added).label("s")).group_by(table.c.page).order_by(desc("s"))
    assert rows(engine, query) == [("p1", 300), ("p0", 240), ("p2", 180)]


def test_a_page_of_rows_by_time(engine: Engine, table: Table) -> None:
    assert rows(engine, select(table.c.page).order_by(table.c.__time).limit(2).offset(1)) == [("p1",), ("p2",)]


def test_rows_per_day_with_time_floor(engine: Engine, table: Table) -> None:
    day = func.time_floor(table.c.__time, "P1D").label("d")
    assert rows(engine, select(day, func.count()).group_by(literal_column("1"))) == [
        ("2026-01-01T00:00:00.000Z", 8),
        ("2026-01-02T00:00:00.000Z", 8),
    ]


def test_distinct_values_null_first(engine: Engine, table: Table) -> None:
    assert rows(engine, select(table.c.channel).distinct().order_by(table.c.channel)) == [
        (None,),
        ("#de",),
        ("#en",),
        ("#fr",),
    ]


def test_in_is_null_count_distinct_between_and_a_subquery(engine: Engine, table: Table) -> None:
    in_and_null = (
        select(func.count()).select_from(table).where(table.c.page.in_(["p0", "p1"]), table.c.channel.is_(None))
    )
    assert rows(engine, in_and_null) == [(4,)]
    distinct_pages = select(func.count(table.c.page.distinct())).where(table.c.added.between(20, 60))
    assert rows(engine, distinct_pages) == [(3,)]
    per_page = select(table.c.page, func.count().label("n")).group_by(table.c.page).subquery()
    assert rows(engine, select(func.max(per_page.c.n))) == [(6,)]
