"""Tables as another writer leaves them, read back against another reader.

PyIceberg writes tables into a SQL catalog (a SQLite file) and into Iceberg's REST catalog server,
their files on moto's S3 server with ``s3://`` in every path. A Floe node, configured only
through ``FLOE_*`` environment variables, loads them by catalog identifier and by metadata
location, and for a matrix of filters over every primitive type with nulls and NaN, nested
fields and projections, serves exactly the rows PyIceberg's ``scan(row_filter=...)`` returns for
the same snapshot. Where PyIceberg is no reference (filters on UUID columns), the expected rows
are computed here from the rows written.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import os
import subprocess
import sys
import time
import uuid

import pyarrow as pa
import pytest

from floe_client import FloeClient, JobSpec
from floe_client.errors import FloeError, InvalidRequest, NotFound
from compare import same_rows
from conftest import Node, _java
from servers import ACCESS_KEY, REGION, SECRET_KEY, MotoServer, RestCatalogServer

from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import AlwaysTrue, And, EqualTo, GreaterThan, IsNull, Not, Or

BUCKET = "lake"
UUIDS = [uuid.UUID("00000000-0000-0000-0000-000000000001"), uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")]

ADDRESS = pa.struct([("city", pa.string()), ("zip", pa.int32())])
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(9, 2)),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("day", pa.date32()),
        ("t", pa.time64("us")),
        ("ts", pa.timestamp("us")),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("fx", pa.binary(4)),
        ("bin", pa.binary()),
        ("u", pa.uuid()),
        ("addr", ADDRESS),
    ]
)

WORDS = ["a", "b", "ab", "abc", "", "B", "zeta", "Oslo"]
DOUBLES = [1.5, -2.0, 0.0, 3.25, math.nan, 100.0]
CITIES = ["Oslo", "Bergen", "Tromsø"]


def _row(i: int) -> dict:
    """A deterministic row: every column null now and then (never all at once)."""

    def maybe(value, salt):
        return None if (i * 7 + salt) % 5 == 0 else value

    base = dt.datetime(2024, 4, 28) + dt.timedelta(minutes=37 * i)
    return {
        "id": i,
        "i": maybe(i % 21 - 10, 1),
        "l": maybe((i * 7_919) % 10_000_000_000 - 5_000_000_000, 2),
        "f": maybe([0.5, 0.1, -1.0, math.nan, 2.0][i % 5], 3),
        "d": maybe(DOUBLES[i % len(DOUBLES)], 4),
        "dec": maybe(decimal.Decimal(i % 1500 - 500).scaleb(-2), 6),
        "s": maybe(WORDS[i % len(WORDS)], 7),
        "b": maybe(i % 3 == 0, 8),
        "day": maybe(dt.date(2024, 1, 1) + dt.timedelta(days=i % 240), 9),
        "t": maybe((dt.datetime(2000, 1, 1) + dt.timedelta(seconds=(i * 613) % 86_400)).time(), 10),
        "ts": maybe(base, 11),
        "tz": maybe(base.replace(tzinfo=dt.timezone.utc), 12),
        "fx": maybe(bytes([0, 1, 2, i % 4]), 13),
        "bin": maybe(bytes([10, 10 + i % 3]), 14),
        "u": maybe(UUIDS[i % 2].bytes, 15),
        "addr": None if i % 6 == 0 else {"city": maybe(CITIES[i % 3], 16), "zip": maybe(i % 300, 17)},
    }


def _rows(ids) -> pa.Table:
    return pa.Table.from_pylist([_row(i) for i in ids], schema=SCHEMA)


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = MotoServer(tmp_path_factory.mktemp("moto") / "moto.log")
    server.s3().create_bucket(Bucket=BUCKET)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lake(moto, tmp_path_factory):
    """A PyIceberg SQL catalog named ``lake`` (SQLite) over S3, with table ``db.types`` written in
    three appends: mixed rows, rows with every optional column null, rows whose floats are NaN."""
    db = tmp_path_factory.mktemp("lake") / "lake.db"
    catalog = SqlCatalog(
        "lake", uri=f"sqlite:///{db}", warehouse=f"s3://{BUCKET}/wh", **moto.pyiceberg_properties()
    )
    catalog.create_namespace("db")
    table = catalog.create_table("db.types", schema=SCHEMA)
    table.append(_rows(range(0, 600)))
    nulls = pa.Table.from_pylist([{"id": 1_000 + i} for i in range(40)], schema=SCHEMA)
    table.append(nulls)
    nans = pa.Table.from_pylist(
        [{"id": 2_000 + i, "i": i, "d": math.nan, "f": math.nan} for i in range(40)], schema=SCHEMA
    )
    table.append(nans)
    return catalog, db


@pytest.fixture(scope="module")
def rest(moto, tmp_path_factory):
    """Iceberg's REST catalog server over the same S3, its catalog in a SQLite file."""
    workdir = tmp_path_factory.mktemp("rest")
    server = RestCatalogServer(
        _java(),
        workdir / "rest.log",
        {
            "uri": f"jdbc:sqlite:{workdir / 'rest.db'}",
            "warehouse": f"s3://{BUCKET}/rest",
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": moto.endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "client.region": REGION,
        },
    )
    try:
        yield server
    finally:
        server.stop()


def _node_env(moto, lake_db, rest_uri) -> dict:
    """Everything the node knows about stores and catalogs, as an operator's ConfigMap gives it."""
    return {
        "FLOE_S3_ENDPOINT": moto.endpoint,
        "FLOE_S3_PATH_STYLE_ACCESS": "true",
        "FLOE_S3_ACCESS_KEY": ACCESS_KEY,
        "FLOE_S3_SECRET_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "FLOE_CATALOG__LAKE__TYPE": "jdbc",
        "FLOE_CATALOG__LAKE__URI": f"jdbc:sqlite:{lake_db}",
        "FLOE_CATALOG__LAKE__WAREHOUSE": f"s3://{BUCKET}/wh",
        "FLOE_CATALOG__REST__TYPE": "rest",
        "FLOE_CATALOG__REST__URI": rest_uri,
    }


@pytest.fixture(scope="module")
def node(classpath, moto, lake, rest, tmp_path_factory):
    node = Node(
        classpath,
        tmp_path_factory.mktemp("tables-node") / "node.log",
        {"floe.load.slice-target-size": "64KiB"},
        env=_node_env(moto, lake[1], rest.uri),
    )
    try:
        node.wait_ready()
        yield node
    finally:
        node.stop()


@pytest.fixture()
def client(node):
    with FloeClient(node.address, timeout=120.0, patience=30.0) as c:
        yield c


_names = iter(range(1_000_000))


def _floe_rows(client, table, **load) -> pa.Table:
    """Loads ``table`` as a fresh dataset, reads it whole, drops it; rows sorted by id."""
    name = f"t{next(_names)}"
    status = client.load(name, table, **load)
    assert status["state"] == "READY", status
    try:
        batches = list(client.read_shard(name))
        schema = batches[0].schema if batches else None
        result = pa.Table.from_batches(batches, schema=schema) if batches else None
    finally:
        client.drop(name)
    if result is None:
        return None
    return result.sort_by("id")


_same = same_rows


def _reference(table, row_filter=AlwaysTrue(), columns=("*",)) -> pa.Table:
    result = table.scan(row_filter=row_filter, selected_fields=tuple(columns)).to_arrow()
    return result.sort_by("id")


FILTERS = [
    "i < 0",
    "i != 0",
    "i <> 0",
    "i == 1",
    "not (i = 0)",
    "i in (0, 1)",
    "i not in (0, 1)",
    "not i in (0, 1)",
    "i between -5 and 5",
    "i >= 3 and l < 0",
    "l >= 42",
    "d > 0",
    "d >= 0",
    "d != 1.5",
    "not (d > 0)",
    "d is nan",
    "d is not nan",
    "not (d is nan)",
    "d in (1.5, -2.0)",
    "d not in (1.5, -2.0) and d is not null",
    "f <= 0.5",
    "dec <= 3.5",
    "dec > -1.25",
    "s != 'a'",
    "s in ('a', 'b')",
    "s not in ('a', 'b')",
    "s like 'a%'",
    "s not like 'a%'",
    "s >= 'b'",
    "not (i = 0 or s = 'b')",
    "i = 0 or s is null",
    "b = true",
    "b != true",
    "day >= '2024-05-01'",
    "day < '2024-02-01' or day is null",
    "t < '12:00:00'",
    "ts >= '2024-05-01T00:00:00'",
    "tz >= '2024-05-01T00:00:00+00:00'",
    "addr.city = 'Oslo'",
    "addr.city != 'Oslo'",
    "addr.zip > 100 and addr.city like 'B%'",
    "addr.city is null",
    '"s" = \'ab\'',
]


# PyIceberg 0.12 evaluates `not in` with two or more values as NOT(is_in) in pyarrow, which keeps
# the rows where the column is null, unlike its own `!=` and `not in` of one value (and unlike
# Spark and Trino). Floe keeps them out, as SQL does; the reference adds what SQL implies.
SQL_REFERENCE = {
    "i not in (0, 1)": "i not in (0, 1) and i is not null",
    "not i in (0, 1)": "i not in (0, 1) and i is not null",
    "s not in ('a', 'b')": "s not in ('a', 'b') and s is not null",
    # PyIceberg refuses a decimal literal written with another scale than the column's.
    "dec <= 3.5": "dec <= 3.50",
}


@pytest.mark.parametrize("row_filter", FILTERS)
def test_catalog_table_rows_equal_pyiceberg_for_each_filter(client, lake, row_filter):
    table = lake[0].load_table("db.types")
    reference = _reference(table, SQL_REFERENCE.get(row_filter, row_filter))
    _same(_floe_rows(client, "lake.db.types", filter=row_filter), reference, row_filter)


@pytest.mark.parametrize(
    "columns, row_filter",
    [
        (["id", "addr"], "addr.city = 'Oslo'"),
        (["id", "s"], "addr.zip > 100"),
        (["id", "d", "day"], "s in ('a', 'b') and d is not nan"),
    ],
)
def test_projections_with_filters_on_other_and_nested_columns(client, lake, columns, row_filter):
    table = lake[0].load_table("db.types")
    _same(
        _floe_rows(client, "lake.db.types", columns=columns, filter=row_filter),
        _reference(table, row_filter, columns),
        f"{columns} where {row_filter}",
    )


def test_pyiceberg_expressions_are_sent_unchanged(client, lake):
    table = lake[0].load_table("db.types")
    expression = And(GreaterThan("i", 1), Not(IsNull("s")))
    _same(_floe_rows(client, "lake.db.types", filter=expression), _reference(table, expression), repr(expression))
    nested = Not(EqualTo("addr.city", "Oslo"))
    _same(_floe_rows(client, "lake.db.types", filter=nested), _reference(table, nested), repr(nested))


def test_long_chains_are_served_as_pyiceberg_scans_them(client, lake):
    """The node regroups a chain of one operator into a balanced tree (docs/filter-syntax.md,
    Limits): the rows stay PyIceberg's, for a long text chain of `and` and for a PyIceberg chain
    of `or`, which reaches the node as Iceberg JSON nested as deep as the chain is long (pydantic
    writes no more than about 200 levels)."""
    table = lake[0].load_table("db.types")
    ands = " and ".join(f"id != {2 * k}" for k in range(300)) + " and (s != 'a' or s is null)"
    _same(_floe_rows(client, "lake.db.types", filter=ands), _reference(table, ands), "300 chained ands")
    ors = functools.reduce(Or, [EqualTo("id", 3 * k) for k in range(150)])
    _same(_floe_rows(client, "lake.db.types", filter=ors), _reference(table, ors), "150 chained ors")


def test_a_filter_beyond_its_limits_is_refused_as_the_callers_mistake(client):
    too_many = " and ".join(f"id != {k}" for k in range(1_100))
    with pytest.raises(InvalidRequest, match="more than 1024 terms") as refused:
        client.load("too-many-terms", "lake.db.types", filter=too_many)
    assert refused.value.floe_code == "INVALID_REQUEST"
    assert len(refused.value.description) <= 1_024


def test_uuid_filters_serve_the_rows_the_spec_defines(client, lake):
    # Not compared with PyIceberg (it cannot filter UUID columns): expected rows computed here.
    everything = _reference(lake[0].load_table("db.types"))
    wanted = [
        row_id
        for row_id, value in zip(everything["id"].to_pylist(), everything["u"].to_pylist())
        if value is not None and (value if isinstance(value, bytes) else value.bytes) == UUIDS[1].bytes
    ]
    served = _floe_rows(client, "lake.db.types", filter=f"u = '{UUIDS[1]}'", columns=["id"])
    assert served["id"].to_pylist() == sorted(wanted)


def test_same_table_by_identifier_catalog_field_and_metadata_location(client, lake):
    table = lake[0].load_table("db.types")
    reference = _reference(table)
    metadata = table.metadata_location
    assert metadata.startswith("s3://")
    _same(_floe_rows(client, "db.types", catalog="lake"), reference, "catalog field")
    _same(_floe_rows(client, metadata), reference, "s3:// metadata location")
    _same(_floe_rows(client, "s3a://" + metadata[len("s3://"):]), reference, "s3a:// metadata location")


def test_list_shows_where_each_dataset_came_from_and_status_its_snapshot(node, client, lake):
    table = lake[0].load_table("db.types")
    client.load("from_catalog", "lake.db.types")
    client.load("from_location", table.metadata_location)
    try:
        # `list` finds datasets through the cluster's receptionist, which learns of them shortly
        # after they are planned.
        deadline = time.monotonic() + 30
        listed = {}
        while not {"from_catalog", "from_location"} <= listed.keys() and time.monotonic() < deadline:
            listed = {d["name"]: d for d in client.list()}
            time.sleep(0.2)
        assert listed["from_catalog"]["source"] == {"catalog": "lake", "table": "db.types"}
        assert listed["from_location"]["source"] == {"location": table.metadata_location}
        assert client.status("from_catalog")["snapshot_id"] == table.current_snapshot().snapshot_id
        # `floe list`, run as a person runs it, shows both sources in its table.
        shown = subprocess.run(
            [sys.executable, "-m", "floe_client.cli", "--address", node.address, "list"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "400"},
        )
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        rows = {name: line for name in ("from_catalog", "from_location") for line in lines if f" {name} " in line}
        assert "lake.db.types" in rows["from_catalog"], shown.stdout
        assert table.metadata_location in rows["from_location"], shown.stdout
    finally:
        client.drop("from_catalog")
        client.drop("from_location")


def test_rest_catalog_table_written_by_pyiceberg(client, rest, moto):
    catalog = RestCatalog("rest", uri=rest.uri, **moto.pyiceberg_properties())
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", schema=SCHEMA)
    table.append(_rows(range(100, 400)))
    table.append(_rows(range(900, 950)))
    _same(_floe_rows(client, "rest.db.events"), _reference(table), "REST catalog table")
    row_filter = "d >= 0 and s not like 'a%'"
    _same(_floe_rows(client, "rest.db.events", filter=row_filter), _reference(table, row_filter), row_filter)


@pytest.mark.parametrize(
    "table, error, words",
    [
        ("lake.db.missing", NotFound, ["db.missing", "catalog 'lake'"]),
        ("nosuch.db.types", InvalidRequest, ["No catalog 'nosuch' for table 'nosuch.db.types'", "configured catalogs: lake, rest"]),
        ("s3://no-such-bucket/t/metadata/v1.metadata.json", NotFound, ["no-such-bucket"]),
        ("hdfs://namenode/warehouse/t", InvalidRequest, ["Unsupported location", "s3://, s3a://"]),
        ("http://127.0.0.1:1/t", InvalidRequest, ["Unsupported location"]),
    ],
)
def test_bad_tables_say_what_was_wrong(client, table, error, words):
    with pytest.raises(error) as raised:
        client.load("bad", table)
    for word in words:
        assert word in str(raised.value)


def test_a_catalog_that_is_not_configured_is_named_with_those_that_are(client):
    with pytest.raises(InvalidRequest) as raised:
        client.load("bad", "db.types", catalog="nope")
    assert "No catalog 'nope'" in str(raised.value)
    assert "configured catalogs: lake, rest" in str(raised.value)


@pytest.mark.parametrize(
    "row_filter, words",
    [
        ("day >= '2024-13-01'", ["'2024-13-01'", "column 'day'", "type date"]),
        ("tz > '2024-05-01T00:00:00'", ["column 'tz'", "timestamptz", "UTC offset"]),
        ("s = 5", ["column 's'", "string"]),
        ("nope = 1", ["unknown column 'nope'"]),
        ("i is nan", ["'is nan' applies to float and double"]),
    ],
)
def test_bad_filters_name_the_column_its_type_and_the_literal(client, row_filter, words):
    with pytest.raises(InvalidRequest) as raised:
        client.load("badfilter", "lake.db.types", filter=row_filter)
    for word in words:
        assert word in str(raised.value)
    assert client.status("badfilter")["state"] in ("FAILED", "ABSENT")


def test_web_identity_credentials_from_sts_with_no_keys(classpath, moto, lake, tmp_path):
    """IRSA: a node with no S3 keys gets credentials from STS (moto's AssumeRoleWithWebIdentity)
    through the AWS SDK's default chain; without the web identity it has none and says so."""
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJub25lIn0.eyJzdWIiOiJmbG9lIn0.c2lnbmF0dXJl")
    metadata = lake[0].load_table("db.types").metadata_location
    common = {"FLOE_S3_ENDPOINT": moto.endpoint, "FLOE_S3_PATH_STYLE_ACCESS": "true", "AWS_REGION": REGION}
    irsa = dict(
        common,
        AWS_WEB_IDENTITY_TOKEN_FILE=str(token),
        AWS_ROLE_ARN="arn:aws:iam::123456789012:role/floe-reader",
        AWS_ROLE_SESSION_NAME="floe-test",
        AWS_ENDPOINT_URL_STS=moto.endpoint,
    )
    with_role = Node(classpath, tmp_path / "irsa.log", env=irsa)
    without = Node(classpath, tmp_path / "none.log", env=common)
    try:
        with_role.wait_ready()
        without.wait_ready()
        with FloeClient(with_role.address, timeout=120.0) as c:
            status = c.load("irsa", metadata)
            assert status["state"] == "READY" and status["rows"] == 680, status
        with FloeClient(without.address, timeout=120.0) as c:
            with pytest.raises(FloeError) as raised:
                c.load("irsa", metadata)
            assert raised.value.code == "UNAUTHORIZED", raised.value
            assert "No AWS credentials" in str(raised.value)
    finally:
        with_role.stop()
        without.stop()


def test_refresh_after_pyiceberg_commits_loads_only_what_changed(client, lake):
    catalog = lake[0]
    table = catalog.create_table("db.grow", schema=SCHEMA)
    table.append(_rows(range(0, 300)))
    table.append(_rows(range(300, 600)))
    first = client.load("grow", "lake.db.grow")
    try:
        # Another writer commits: an append, and a copy-on-write delete in the second file only.
        table.append(_rows(range(600, 800)))
        table.delete("id >= 550 and id < 560")
        table = catalog.load_table("db.grow")
        status = client.refresh("grow")
        report = status["refresh"]
        assert report["state"] == "DONE", status
        assert status["snapshot_id"] == table.current_snapshot().snapshot_id
        assert report["slices_kept"] > 0, status  # the first commit's slices
        assert report["slices_loaded"] > 0, status
        assert report["slices_kept"] + report["slices_loaded"] == status["slices_total"]
        assert report["slices_freed"] == first["slices_total"] - report["slices_kept"]
        rows = pa.Table.from_batches(list(client.read_shard("grow"))).sort_by("id")
        _same(rows, _reference(table), "refreshed dataset")
        assert client.refresh("grow")["refresh"]["state"] == "UNCHANGED"
    finally:
        client.drop("grow")


def test_a_job_reads_its_epoch_on_the_old_layout_and_the_next_on_the_new(client, lake):
    catalog = lake[0]
    table = catalog.create_table("db.epochs", schema=SCHEMA)
    table.append(_rows(range(0, 400)))
    client.load("epochs", "lake.db.epochs", batch_rows=64)
    spec = JobSpec("epochs-job", "epochs", batch_rows=100, seed=5)
    client.register_job_spec(spec)
    try:
        first = list(client.read_job(spec, 0, batch_from=0, batch_to=2))
        table.append(_rows(range(400, 600)))
        assert client.refresh("epochs")["refresh"]["state"] == "DONE"
        rest = list(client.read_job(spec, 0, batch_from=2))
        epoch0 = [i for _, b in first + rest for i in b.column("id").to_pylist()]
        assert sorted(epoch0) == list(range(0, 400))  # the old layout, each row once
        epoch1 = [i for _, b in client.read_job(spec, 1) for i in b.column("id").to_pylist()]
        assert sorted(epoch1) == list(range(0, 600))  # the new layout, each row once
        assert client.job_status("epochs-job", 1)["layout"] != client.job_status("epochs-job", 0)["layout"]
    finally:
        client.drop_job("epochs-job")
        client.drop("epochs")
