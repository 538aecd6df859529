"""Tables as ML teams write them, through every path Floe serves, against PyIceberg's reading.

PyIceberg writes ``db.shapes`` into a SQL catalog (SQLite) with a local warehouse: embeddings
(``list<float>`` of one length), token ids (``list<long>``), feature maps (``map<string, float>``),
``map<string, struct>``, ``list<struct>``, a struct holding a list and a map, ``binary`` and
``fixed(16)``, next to ids, labels, scores, strings and dates; nulls at every level (null list,
null element, empty list, null map value, null struct field). Row groups of 40 rows over three
commits. Two nodes load it by catalog identifier: one cuts a slice per row group, one a slice per
commit; every path is compared row by row and value by value with PyIceberg's scan of the same
snapshot, columns and filter: whole loads, filters on any column, projections that leave the
filtered column out, shard reads, job reads (shuffled, ordered, dynamic), refresh and schema
evolution, and seeded random filters. Where Floe's filter results differ from PyIceberg's on
purpose (docs/filter-syntax.md, "Nulls, and where PyIceberg differs"), the tests assert exactly
that difference; where PyIceberg cannot answer (filters on a list or map column itself), the
expected rows are computed from the rows written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from floe_client import FloeClient, JobSpec
from floe_client.errors import InvalidRequest
from catalogs import node_env, sqlite_catalog
from compare import same_rows
from conftest import Node

EMB = 8
WORDS = ["a", "b", "ab", "ß", "", "zeta"]
SOURCES = ["web", "books", "code"]

SPAN = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("tag", pa.string())])
ATTR = pa.struct([("w", pa.float64()), ("tag", pa.string())])
META = pa.struct(
    [("source", pa.string()), ("tags", pa.list_(pa.string())), ("dims", pa.map_(pa.string(), pa.int32()))]
)
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("label", pa.int32()),
        ("score", pa.float64()),
        ("s", pa.string()),
        ("day", pa.date32()),
        ("emb", pa.list_(pa.float32())),
        ("tokens", pa.list_(pa.int64())),
        ("feats", pa.map_(pa.string(), pa.float32())),
        ("attrs", pa.map_(pa.string(), ATTR)),
        ("spans", pa.list_(SPAN)),
        ("meta", META),
        ("img", pa.binary()),
        ("digest", pa.binary(16)),
    ]
)
COMMITS = [range(0, 300), range(300, 600), range(600, 900)]
ROW_GROUP_ROWS = 40


def _row(i: int) -> dict:
    """A deterministic row with nulls at every level, never all at once."""

    def maybe(value, salt):
        return None if (i * 7 + salt) % 11 == 0 else value

    emb = None if i % 13 == 0 else [((i * 31 + k) % 97) / 8.0 for k in range(EMB)]
    if emb is not None and i % 17 == 0:
        emb[3] = None  # a null element inside an embedding
    tokens = None if i % 10 == 0 else [] if i % 10 == 1 else [
        None if (i + k) % 9 == 0 else (i * 131 + k) % 50_000 for k in range(i % 7 + 1)
    ]
    feats = None if i % 12 == 0 else [] if i % 12 == 1 else [
        (f"f{k}", None if (i + k) % 8 == 0 else (i + k) / 4.0) for k in range(i % 4 + 1)
    ]
    attrs = None if i % 9 == 0 else [
        (f"a{k}", None if (i + k) % 5 == 0 else {"w": i * 0.25 + k, "tag": maybe(WORDS[k % 6], k)})
        for k in range(i % 3)
    ]
    spans = None if i % 8 == 0 else [] if i % 8 == 1 else [
        None if (i + k) % 15 == 0 else {"start": k, "end": k + i % 5, "tag": None if k == 1 else WORDS[(i + k) % 6]}
        for k in range(i % 4 + 1)
    ]
    meta = None if i % 14 == 0 else {
        "source": maybe(SOURCES[i % 3], 3),
        "tags": None if i % 6 == 0 else [WORDS[(i + k) % 6] for k in range(i % 3)],
        "dims": None if i % 5 == 0 else [("h", i % 64), ("w", None if i % 4 == 0 else i % 32)],
    }
    return {
        "id": i,
        "label": maybe(i % 3, 1),
        "score": maybe((i * 37 % 1000) / 100.0 - 2.0, 2),
        "s": maybe(WORDS[i % len(WORDS)], 4),
        "day": maybe(dt.date(2024, 1, 1) + dt.timedelta(days=i % 90), 5),
        "emb": emb,
        "tokens": tokens,
        "feats": feats,
        "attrs": attrs,
        "spans": spans,
        "meta": meta,
        "img": None if i % 10 == 3 else b"" if i % 10 == 4 else bytes((i * 13 + k) % 256 for k in range(i % 50 + 1)),
        "digest": None if i % 16 == 0 else hashlib.md5(str(i).encode()).digest(),
    }


def _rows(ids) -> pa.Table:
    return pa.Table.from_pylist([_row(i) for i in ids], schema=SCHEMA)


@pytest.fixture(scope="module")
def ml(tmp_path_factory):
    """PyIceberg's SQL catalog ``ml`` with ``db.shapes`` written in three commits."""
    catalog, db = sqlite_catalog("ml", tmp_path_factory.mktemp("ml"))
    table = catalog.create_table(
        "db.shapes", schema=SCHEMA, properties={"write.parquet.row-group-limit": str(ROW_GROUP_ROWS)}
    )
    for ids in COMMITS:
        table.append(_rows(ids))
    return catalog, db


# A slice per row group (a one-byte target), and a slice per commit.
SLICE_SIZES = {"row-group-slices": "1", "commit-slices": "64MiB"}


@pytest.fixture(scope="module")
def nodes(classpath, ml, tmp_path_factory):
    catalog, db = ml
    warehouse = catalog.properties["warehouse"]
    started = {
        name: Node(
            classpath,
            tmp_path_factory.mktemp(f"ml-{name}") / "node.log",
            {"floe.load.slice-target-size": size},
            env=node_env("ml", db, warehouse),
        )
        for name, size in SLICE_SIZES.items()
    }
    try:
        for node in started.values():
            node.wait_ready()
        yield started
    finally:
        for node in started.values():
            node.stop()


@pytest.fixture(params=list(SLICE_SIZES))
def client(request, nodes):
    with FloeClient(nodes[request.param].address, timeout=120.0, patience=30.0) as c:
        yield c


@pytest.fixture()
def row_group_client(nodes):
    with FloeClient(nodes["row-group-slices"].address, timeout=120.0, patience=30.0) as c:
        yield c


_names = iter(range(1_000_000))


def _sorted(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table["id"]))


def _floe_rows(client, table="ml.db.shapes", **load) -> pa.Table:
    """Loads ``table`` as a fresh dataset, reads it whole, drops it; rows sorted by id."""
    name = f"ml{next(_names)}"
    status = client.load(name, table, **load)
    assert status["state"] == "READY", status
    try:
        batches = list(client.read_shard(name))
    finally:
        client.drop(name)
    return _sorted(pa.Table.from_batches(batches)) if batches else None


def _reference(table, row_filter="True", columns=("*",)) -> pa.Table:
    """PyIceberg's rows, in the column order asked for (Floe serves that order; PyIceberg keeps
    the table's)."""
    rows = table.scan(row_filter=row_filter, selected_fields=tuple(columns)).to_arrow()
    if columns != ("*",):
        rows = rows.select(list(dict.fromkeys(c.split(".")[0] for c in columns)))
    return _sorted(rows)


def _shapes(ml):
    return ml[0].load_table("db.shapes")


def test_every_shape_loads_as_pyiceberg_reads_it(client, ml):
    status = client.load("whole", "ml.db.shapes")
    try:
        assert status["rows"] == 900, status
        batches = list(client.read_shard("whole"))
        served = _sorted(pa.Table.from_batches(batches))
        # What each shape is on the wire: Iceberg's types as Arrow's (docs/tables.md).
        assert served.schema.field("emb").type == pa.list_(pa.field("element", pa.float32()))
        assert pa.types.is_map(served.schema.field("feats").type)
        assert served.schema.field("digest").type == pa.binary(16)
        assert served.schema.field("img").type == pa.binary()
    finally:
        client.drop("whole")
    same_rows(served, _reference(_shapes(ml)), "whole table")


FILTERS = [
    "label = 1",
    "label != 1",
    "label in (0, 2)",
    "label is null",
    "id >= 450 and label = 2",
    "score > 1.5",
    "not (score <= 0)",
    "s = 'ß'",
    "s like 'a%'",
    "s is not null and label < 2",
    "day >= '2024-02-15'",
    "meta.source = 'web'",
    "meta.source != 'code' or label = 0",
    "meta is null",
    "id between 100 and 700 and (s = 'a' or meta.source = 'books')",
]


@pytest.mark.parametrize("row_filter", FILTERS)
def test_a_filter_on_any_column_whatever_else_the_table_holds(client, ml, row_filter):
    same_rows(_floe_rows(client, filter=row_filter), _reference(_shapes(ml), row_filter), row_filter)


@pytest.mark.parametrize(
    "columns, row_filter",
    [
        (["id", "emb"], "label = 1"),
        (["emb", "id"], "meta.source = 'books' and score > 0"),
        (["id", "tokens", "feats", "attrs"], "s in ('a', 'ab')"),
        (["id", "spans", "img", "digest"], "day < '2024-02-01'"),
        (["id", "meta.tags"], "meta.source = 'web'"),
        (["id", "meta"], "meta.source = 'code'"),
    ],
)
def test_projections_with_a_filter_on_a_column_that_is_not_served(client, ml, columns, row_filter):
    same_rows(
        _floe_rows(client, columns=columns, filter=row_filter),
        _reference(_shapes(ml), row_filter, columns),
        f"{columns} where {row_filter}",
    )


@pytest.mark.parametrize(
    "row_filter, expected",
    [
        ("tokens is null", lambda r: r["tokens"] is None),
        ("feats is not null and label = 0", lambda r: r["feats"] is not None and r["label"] == 0),
        ("not (spans is null)", lambda r: r["spans"] is not None),
        ("spans is null", lambda r: r["spans"] is None),
        ("attrs is not null", lambda r: r["attrs"] is not None),
        ("attrs is null or emb is null", lambda r: r["attrs"] is None or r["emb"] is None),
        ("meta is null", lambda r: r["meta"] is None),
    ],
)
def test_null_tests_on_list_and_map_columns_themselves(row_group_client, ml, row_filter, expected):
    # PyIceberg 0.12 cannot filter on a list or map column ("Cannot explicitly project List or Map
    # types"): the expected ids come from PyIceberg's reading of every row. (Its writer stores a
    # null list<struct> or map<string, struct> as an empty one; both readers see that.)
    everything = _reference(_shapes(ml)).to_pylist()
    served = _floe_rows(row_group_client, columns=["id"], filter=row_filter)
    assert ([] if served is None else served["id"].to_pylist()) == [r["id"] for r in everything if expected(r)]


@pytest.mark.parametrize(
    "row_filter, words",
    [
        ("tokens.element = 3", ["'tokens.element'", "inside list 'tokens'"]),
        ("feats.value > 1", ["'feats.value'", "inside map 'feats'"]),
        ("emb > 1", ["column 'emb' is a list"]),
    ],
)
def test_a_filter_inside_a_list_or_map_is_refused_naming_it(row_group_client, row_filter, words):
    with pytest.raises(InvalidRequest) as raised:
        row_group_client.load("inside", "ml.db.shapes", filter=row_filter)
    for word in words:
        assert word in str(raised.value)


def test_shard_reads_split_every_shape_exactly(client, ml):
    row_filter = "label != 0 or meta.source = 'web'"
    client.load("sharded", "ml.db.shapes", filter=row_filter, batch_rows=64)
    try:
        shards = [pa.Table.from_batches(list(client.read_shard("sharded", index, 3))) for index in range(3)]
    finally:
        client.drop("sharded")
    ids = [i for shard in shards for i in shard["id"].to_pylist()]
    assert len(ids) == len(set(ids)), "a row served to two shards"
    same_rows(_sorted(pa.concat_tables(shards)), _reference(_shapes(ml), row_filter), "three shards")


@pytest.mark.parametrize("mode", ["shuffled", "ordered", "dynamic"])
def test_job_reads_serve_every_shape_exactly_once(client, ml, mode):
    row_filter = "score > -1 or label is null"
    columns = ["id", "emb", "tokens", "feats", "attrs", "spans", "meta", "img", "digest", "s"]
    dataset = f"jobs-{mode}"
    client.load(dataset, "ml.db.shapes", filter=row_filter, batch_rows=50)
    spec = JobSpec(
        f"job-{mode}", dataset, batch_rows=32, seed=3, shuffle=mode != "ordered",
        mode="dynamic" if mode == "dynamic" else "deterministic", columns=columns, tail="pad",
    )
    client.register_job_spec(spec)
    try:
        if mode == "dynamic":
            batches = [batch for _, batch in client.read_dynamic(spec, 0, "worker-1")]
        else:
            # Both ranks' halves of each global batch k, in the epoch's order.
            parts = [(k, rank, batch) for rank in range(2) for k, batch in client.read_job(spec, 0, 2, rank)]
            batches = [batch for _, _, batch in sorted(parts, key=lambda part: part[:2])]
    finally:
        client.drop_job(spec.job)
        client.drop(dataset)
    served = pa.Table.from_batches(batches)
    assert served.column_names == columns
    reference = _reference(_shapes(ml), row_filter, columns)
    # tail "pad": the last global batch is filled up with the epoch's first rows, so a few rows
    # come twice; every row comes at least once, with the values PyIceberg reads.
    ids = served["id"].to_pylist()
    assert len(ids) % 32 == 0 and len(ids) - reference.num_rows < 32
    first = sorted(set(range(served.num_rows)), key=lambda k: (ids[k], k))
    unique = [k for n, k in enumerate(first) if n == 0 or ids[first[n - 1]] != ids[k]]
    same_rows(_sorted(served.take(unique)), reference, f"{mode} job epoch")
    if mode == "ordered":
        firsts = list(dict.fromkeys(ids))  # the pad's repeats come after each row's first time
        assert firsts == sorted(firsts)


def _evolved_row(i: int) -> dict:
    """A row of ``db.evolving`` after its schema changed: ``s`` renamed ``title``, a second
    embedding ``emb2`` and a field ``lang`` in ``meta``."""
    row = _row(i)
    row["title"] = row.pop("s")
    row["emb2"] = [float(i), -float(i)] if i % 3 else None
    if row["meta"] is not None:
        row["meta"] = dict(row["meta"], lang="en" if i % 2 else None)
    return row


def test_refresh_and_schema_evolution_keep_every_shape(row_group_client, ml):
    from pyiceberg.types import FloatType, ListType, StringType

    catalog = ml[0]
    table = catalog.create_table(
        "db.evolving", schema=SCHEMA, properties={"write.parquet.row-group-limit": str(ROW_GROUP_ROWS)}
    )
    table.append(_rows(range(0, 200)))
    client = row_group_client
    client.load("evolving", "ml.db.evolving", filter="label != 2")
    try:
        # Another writer appends: a refresh loads the new commit, every shape as PyIceberg reads it.
        table.append(_rows(range(200, 260)))
        table = catalog.load_table("db.evolving")
        assert client.refresh("evolving")["refresh"]["state"] == "DONE"
        served = _sorted(pa.Table.from_batches(list(client.read_shard("evolving"))))
        same_rows(served, _reference(table, "label != 2"), "refreshed after an append")

        # Then evolves the schema (a new embedding column, a renamed column, a new field in a
        # struct) and appends rows that have them.
        with table.update_schema() as update:
            update.add_column("emb2", ListType(element_id=1, element_type=FloatType(), element_required=False))
            update.rename_column("s", "title")
            update.add_column(("meta", "lang"), StringType())
        table = catalog.load_table("db.evolving")
        table.append(pa.Table.from_pylist([_evolved_row(i) for i in range(260, 380)], schema=table.schema().as_arrow()))
        table = catalog.load_table("db.evolving")
        status = client.refresh("evolving")
        assert status["refresh"]["state"] == "DONE", status
        assert status["snapshot_id"] == table.current_snapshot().snapshot_id
        served = _sorted(pa.Table.from_batches(list(client.read_shard("evolving"))))
        # PyIceberg 0.12 aborts reading the top-level map columns of a table whose schema changed
        # between its files (pyarrow: "Map array keys array should have no nulls"): those two are
        # compared above, before the change; the map inside `meta` is compared here.
        kept = [name for name in served.column_names if name not in ("feats", "attrs")]
        same_rows(served.select(kept), _reference(table, "label != 2", kept), "refreshed after schema evolution")
    finally:
        client.drop("evolving")
    # A fresh load filters on the new and the renamed columns, serving a list it does not filter.
    row_filter = "title != 'a' and meta.lang = 'en'"
    columns = ["id", "emb2", "title", "meta"]
    reference = _reference(table, row_filter, columns)
    assert reference.num_rows > 0 and reference["emb2"].null_count < reference.num_rows
    same_rows(_floe_rows(client, "ml.db.evolving", filter=row_filter, columns=columns), reference, row_filter)


# -- where Floe's filters differ from PyIceberg's, on purpose --------------------------------------

# Each case: a filter, and why PyIceberg keeps the rows where the column is null. Floe follows SQL
# (a null satisfies no comparison, and `not` leaves it unknown): it serves PyIceberg's rows less
# those. docs/filter-syntax.md lists the same cases.
DIFFERENCES = [
    ("label not in (0, 1)", "label"),  # PyIceberg evaluates `not in` of 2+ values as NOT(is_in)
    ("not label in (0, 2)", "label"),
    ("s not in ('a', 'ß')", "s"),
    ("label < 3000000000", "label"),  # beyond int's range: Iceberg folds it into "always true"
    ("label != 3000000000", "label"),
    ("label > -3000000000", "label"),
]


@pytest.mark.parametrize("row_filter, column", DIFFERENCES)
def test_where_floe_differs_from_pyiceberg_it_leaves_out_exactly_the_null_rows(row_group_client, ml, row_filter, column):
    table = _shapes(ml)
    pyiceberg = _reference(table, row_filter)
    nulls = pyiceberg.filter(pc.is_null(pyiceberg[column]))
    assert nulls.num_rows > 0, f"PyIceberg no longer keeps the null rows of {row_filter}: update the docs"
    served = _floe_rows(row_group_client, filter=row_filter)
    same_rows(served, pyiceberg.filter(pc.is_valid(pyiceberg[column])), row_filter)


# -- seeded random filters -------------------------------------------------------------------------

# Atoms whose meaning PyIceberg and SQL share, negated or not: comparisons with literals in the
# column's range, null tests, and `in` (never under a `not`; see DIFFERENCES).
_COMPARABLE = {
    "id": lambda rnd: str(rnd.randrange(0, 900)),
    "label": lambda rnd: str(rnd.randrange(0, 3)),
    "score": lambda rnd: f"{rnd.uniform(-2, 8):.2f}",
    "s": lambda rnd: repr(rnd.choice(WORDS)),
    "day": lambda rnd: f"'{dt.date(2024, 1, 1) + dt.timedelta(days=rnd.randrange(90))}'",
    "meta.source": lambda rnd: repr(rnd.choice(SOURCES)),
}
# Null tests on list, map and struct columns themselves: test_null_tests_on_list_and_map_columns
# (PyIceberg cannot evaluate them).
_NULLABLE = ["label", "score", "s", "day", "meta.source", "img", "digest"]


def _atom(rnd: random.Random, negatable: bool) -> str:
    roll = rnd.random()
    if roll < 0.2:
        return f"{rnd.choice(_NULLABLE)} is {rnd.choice(['', 'not '])}null"
    column = rnd.choice(sorted(_COMPARABLE))
    if roll < 0.3 and not negatable:
        values = sorted({_COMPARABLE[column](rnd) for _ in range(3)})
        return f"{column} in ({', '.join(values)})"
    return f"{column} {rnd.choice(['=', '!=', '<', '<=', '>', '>='])} {_COMPARABLE[column](rnd)}"


def _expression(rnd: random.Random, depth: int, negatable: bool = False) -> str:
    if depth == 0 or rnd.random() < 0.3:
        return _atom(rnd, negatable)
    roll = rnd.random()
    if roll < 0.2:
        return f"not ({_expression(rnd, depth - 1, True)})"
    joiner = "and" if roll < 0.6 else "or"
    return f"({_expression(rnd, depth - 1, negatable)} {joiner} {_expression(rnd, depth - 1, negatable)})"


RANDOM_FILTERS = [_expression(random.Random(seed), 3) for seed in range(40)]
_SERVED = ["id", "label", "score", "s", "day", "emb", "tokens", "feats", "attrs", "spans", "meta", "img", "digest"]


@pytest.mark.parametrize("seed", range(len(RANDOM_FILTERS)))
def test_random_filters_over_a_mixed_table_match_pyiceberg(row_group_client, ml, seed):
    row_filter = RANDOM_FILTERS[seed]
    rnd = random.Random(1_000 + seed)
    columns = ["id", *rnd.sample(_SERVED[1:], rnd.randrange(1, 6))]
    same_rows(
        _floe_rows(row_group_client, filter=row_filter, columns=columns),
        _reference(_shapes(ml), row_filter, columns),
        f"{columns} where {row_filter}",
    )
