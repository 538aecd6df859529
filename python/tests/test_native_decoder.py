"""Arrow's C++ Parquet reader (the ``native`` decoder) against PyIceberg, on a table PyIceberg wrote.

A local table (``file://``) with every primitive type of test_tables.py, nulls and NaN, in four
commits of files with several row groups each. A node whose slices are whole files decodes the
flat columns natively where they lie; one whose slices are single row groups (a file split across
slices) decodes them natively too, from excerpts of each slice's row groups (the JNI scanner reads
whole files only); a nested column sends the slices to the generic reader.
Every way serves the rows PyIceberg's scan returns, value by value, and ``status`` says which
decoder each slice used.
"""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalogs import node_env, sqlite_catalog
from compare import same_rows
from conftest import Node
from floe_client import FloeClient
from test_tables import SCHEMA, _row

FLAT = [f.name for f in SCHEMA if not pa.types.is_struct(f.type)]
ROW_GROUP_ROWS = 100


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """PyIceberg's SQL catalog ``local`` over a ``file://`` warehouse, table ``db.types``."""
    root = tmp_path_factory.mktemp("native")
    catalog, db = sqlite_catalog("local", root)
    table = catalog.create_table(
        "db.types", schema=SCHEMA, properties={"write.parquet.row-group-limit": str(ROW_GROUP_ROWS)}
    )
    table.append(pa.Table.from_pylist([_row(i) for i in range(0, 600)], schema=SCHEMA))
    table.append(pa.Table.from_pylist([{"id": 1_000 + i} for i in range(40)], schema=SCHEMA))
    table.append(
        pa.Table.from_pylist(
            [{"id": 2_000 + i, "i": i, "d": math.nan, "f": math.nan} for i in range(40)], schema=SCHEMA
        )
    )
    table.append(pa.Table.from_pylist([_row(i) for i in range(3_000, 3_450)], schema=SCHEMA))
    # Files written without field ids, added as they are: read through the name mapping.
    flat = pa.schema([f for f in SCHEMA if f.name in FLAT])
    imported = catalog.create_table("db.imported", schema=flat)
    for part in range(2):
        path = root / f"imported-{part}.parquet"
        pq.write_table(
            pa.Table.from_pylist([_row(i) for i in range(part * 300, part * 300 + 300)], schema=flat), path,
            row_group_size=ROW_GROUP_ROWS,
        )
        imported.add_files([f"file://{path}"])
    return catalog, db


# Whole files per slice, decoded where they lie, and a slice per row group, decoded from excerpts.
SLICE_SIZES = {"file-slices": "64MiB", "row-group-slices": "1"}


@pytest.fixture(scope="module")
def nodes(classpath, local, tmp_path_factory):
    catalog, db = local
    env = node_env("local", db, catalog.properties["warehouse"])
    started = {
        name: Node(
            classpath,
            tmp_path_factory.mktemp(f"native-{name}") / "node.log",
            {"floe.load.slice-target-size": size},
            env=env,
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


_names = iter(range(1_000_000))


def _served(node, columns=None, table="local.db.types", **load):
    """The rows of a fresh dataset sorted by id, and the decoders its status reports."""
    name = f"n{next(_names)}"
    with FloeClient(node.address, timeout=120.0, patience=30.0) as client:
        status = client.load(name, table, columns=columns, **load)
        assert status["state"] == "READY", status
        try:
            decoders = client.status(name)["decoders"]
            batches = list(client.read_shard(name))
        finally:
            client.drop(name)
    return pa.Table.from_batches(batches).sort_by("id"), decoders


def _reference(local, columns=("*",), row_filter="True", table="db.types") -> pa.Table:
    table = local[0].load_table(table)
    return table.scan(row_filter=row_filter, selected_fields=tuple(columns)).to_arrow().sort_by("id")


def test_whole_files_of_flat_columns_are_decoded_natively_as_pyiceberg_reads_them(nodes, local):
    served, decoders = _served(nodes["file-slices"], FLAT)
    assert set(decoders) == {"native"}, decoders
    assert served.num_rows == 1_130
    same_rows(served, _reference(local, FLAT), "native, flat columns")


def test_a_file_split_across_slices_is_decoded_natively_from_excerpts_of_its_row_groups(nodes, local):
    served, decoders = _served(nodes["row-group-slices"], FLAT)
    assert set(decoders) == {"native"}, decoders
    assert sum(decoders.values()) > 4  # the 600- and 450-row files, a slice per row group
    same_rows(served, _reference(local, FLAT), "native, row-group slices")
    # Some columns, in another order than the file's: only theirs are copied.
    some = ["s", "id", "d"]
    served, decoders = _served(nodes["row-group-slices"], some)
    assert set(decoders) == {"native"}, decoders
    same_rows(served, _reference(local, some).select(some), "native, row-group slices, projected")


def test_a_nested_column_sends_the_slices_to_the_generic_reader(nodes, local):
    served, decoders = _served(nodes["file-slices"])
    assert set(decoders) == {"generic"}, decoders
    same_rows(served, _reference(local), "generic, nested column")


def test_a_filter_the_partition_does_not_decide_is_applied_row_by_row(nodes, local):
    served, decoders = _served(nodes["file-slices"], FLAT, filter="i >= 3 and l < 0")
    assert set(decoders) == {"generic"}, decoders
    same_rows(served, _reference(local, FLAT, "i >= 3 and l < 0"), "generic, filter")


@pytest.mark.parametrize("slices", SLICE_SIZES)
def test_files_without_field_ids_are_read_through_the_name_mapping(nodes, local, slices):
    served, decoders = _served(nodes[slices], table="local.db.imported")
    assert set(decoders) == {"native"}, decoders
    assert served.num_rows == 600
    same_rows(served, _reference(local, table="db.imported"), f"native, name mapping, {slices}")
