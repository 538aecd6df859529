"""FloeClient and floe_client.read against a real node and a real Iceberg table."""

from __future__ import annotations

import collections
import threading
import time

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import floe_client
from floe_client import (
    AlreadyExists,
    DatasetNotFound,
    FloeClient,
    InvalidRequest,
    NotFound,
    NotReady,
    ResourceExhausted,
)
from conftest import ROWS


def ids_of(batches):
    ids = []
    for batch in batches:
        assert isinstance(batch, pa.RecordBatch)
        ids.extend(batch.column(batch.schema.get_field_index("id")).to_pylist())
    return ids


@pytest.mark.parametrize("shards", [1, 3, 4])
def test_every_row_exactly_once_through_n_shards(client, sample, shards):
    ids, sizes = [], []
    for index in range(shards):
        info = client.plan(sample, index, shards)
        shard = ids_of(client.read_shard(sample, index, shards))
        assert len(shard) == info.total_records
        sizes.append(len(shard))
        ids.extend(shard)
    assert len(ids) == ROWS
    assert collections.Counter(ids) == collections.Counter(range(ROWS))
    # Shards are contiguous global ranges whose sizes differ by at most one row.
    assert sizes == [ROWS * (i + 1) // shards - ROWS * i // shards for i in range(shards)]


def test_plan_answers_schema_and_ordered_endpoints(client, sample):
    info = client.plan(sample, 1, 3)
    assert info.schema.names == ["id", "user_id", "rating", "score", "lang", "text", "event_time"]
    assert info.schema.field("id").type == pa.int64()
    assert info.schema.field("event_time").type == pa.timestamp("us", tz="UTC")
    assert info.total_records == ROWS * 2 // 3 - ROWS // 3
    parts = [floe_client.Part.of(e.ticket) for e in info.endpoints]
    assert parts and all(p.dataset == sample and p.rows > 0 for p in parts)
    assert sum(p.rows for p in parts) == info.total_records
    assert all(e.locations for e in info.endpoints)


def test_status_list_and_cluster(client, sample):
    status = client.status(sample)
    assert status["name"] == sample
    assert status["state"] == "READY"
    assert status["rows"] == ROWS
    assert status["slices_loaded"] == status["slices_total"] > 1
    assert status["bytes"] > 0
    assert isinstance(status["snapshot_id"], int)
    listed = {s["name"]: s for s in client.list()}
    assert listed[sample]["state"] == "READY"
    assert client.status("never-loaded")["state"] == "ABSENT"
    cluster = client.cluster()
    assert cluster["self"] in [m["address"] for m in cluster["members"]]
    assert cluster["unreachable"] == []
    assert (cluster["data_nodes_up"], cluster["min_data_nodes"]) == (1, 1)
    assert "warning" not in cluster


def test_columns_filter_and_drop(client, sample_table):
    status = client.load(
        "subset", str(sample_table), columns=["score", "id"], filter="id < 1000 or id >= 199990", batch_rows=100
    )
    assert status["state"] == "READY"
    try:
        assert status["rows"] == 1010
        batches = list(client.read_shard("subset"))
        assert all(sorted(b.schema.names) == ["id", "score"] for b in batches)
        assert all(b.num_rows <= 100 for b in batches)
        assert sorted(ids_of(batches)) == list(range(1000)) + list(range(199990, 200000))
        # The same spec again answers the status; another spec is a conflict.
        assert client.load(
            "subset", str(sample_table), columns=["score", "id"], filter="id < 1000 or id >= 199990", batch_rows=100
        )["state"] == "READY"
        with pytest.raises(AlreadyExists, match="other settings"):
            client.load("subset", str(sample_table), columns=["id"])
    finally:
        dropped = client.drop("subset")
    assert dropped["dropped"] is True
    assert client.status("subset")["state"] == "ABSENT"
    assert "subset" not in {s["name"] for s in client.list()}
    with pytest.raises(DatasetNotFound, match="No dataset 'subset'"):
        client.drop("subset")


def test_columns_are_served_in_the_order_given(client, sample_table):
    client.load("reordered", str(sample_table), columns=["score", "id"])
    try:
        assert client.plan("reordered").schema.names == ["score", "id"]
    finally:
        client.drop("reordered")


def test_plain_read_iterator(address, sample):
    rows, ids = 0, set()
    for batch in floe_client.read(address, sample, 1, 2):
        assert isinstance(batch, pa.RecordBatch)
        rows += batch.num_rows
        ids.update(batch.column(0).to_pylist())
    assert rows == len(ids) == ROWS - ROWS // 2
    other = set(ids_of(floe_client.read(address, sample, 0, 2)))
    assert not ids & other
    assert ids | other == set(range(ROWS))


def test_read_from_an_offset(client, sample):
    whole = ids_of(client.read_shard(sample, 2, 3))
    for offset in (0, 1, 8191, 8192, 20000, len(whole) - 1, len(whole)):
        assert ids_of(client.read_shard(sample, 2, 3, offset=offset)) == whole[offset:]
    with pytest.raises(ValueError, match="past the end"):
        client.read_shard(sample, 2, 3, offset=len(whole) + 1)


def test_closing_a_read_early_stops_its_threads(client, sample):
    before = {t.ident for t in threading.enumerate()}
    reader = client.read_shard(sample, 0, 1)
    assert next(reader).num_rows > 0
    reader.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("floe-")]
        if not extra:
            break
        time.sleep(0.1)
    assert not extra
    # The client still works afterwards.
    assert client.status(sample)["state"] == "READY"


# -- errors --------------------------------------------------------------------------------------


def test_unknown_dataset_is_dataset_not_found(client):
    with pytest.raises(DatasetNotFound, match="No dataset 'nope'") as raised:
        client.plan("nope")
    assert raised.value.code == "NOT_FOUND"
    assert isinstance(raised.value, LookupError)
    with pytest.raises(DatasetNotFound):
        list(client.read_shard("nope", 0, 2))
    with pytest.raises(DatasetNotFound):
        list(floe_client.read(client.address, "nope"))


def test_unknown_column_is_invalid_request(client, sample_table):
    with pytest.raises(InvalidRequest, match="Unknown column 'nope'") as raised:
        client.load("bad-column", str(sample_table), columns=["id", "nope"])
    assert raised.value.code == "INVALID_ARGUMENT"
    assert "the table has: [id, user_id" in str(raised.value)
    # The failed load left nothing loaded (a FAILED dataset may be loaded again).
    status = client.status("bad-column")
    assert status["state"] in ("ABSENT", "FAILED") and status["bytes"] == 0


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"name": "bad name!"}, "name"),
        ({"filter": "rating >= "}, "Invalid row filter at position"),
        ({"filter": "nope > 3"}, "nope"),
        ({"batch_rows": 0}, "batch_rows"),
        ({"snapshot_id": 1}, "snapshot"),
    ],
)
def test_malformed_load_is_invalid_request(client, sample_table, spec, message):
    spec = {"name": "malformed", **spec}
    with pytest.raises(InvalidRequest, match=message):
        client.load(spec.pop("name"), str(sample_table), **spec)


def test_malformed_bodies_are_invalid_requests(client):
    flight = client._flight()
    for action, body, message in [
        ("load", b"{not json", "Malformed load action body"),
        ("load", b'{"name": "x", "table": "t", "colums": ["id"]}', "Unknown field 'colums'"),
        ("status", b"{}", "name"),
        ("reload", b"{}", "Unknown action 'reload'"),
    ]:
        with pytest.raises(pa.ArrowException) as raised:
            list(flight.do_action(fl.Action(action, body)))
        error = floe_client.errors.translate(raised.value)
        assert isinstance(error, InvalidRequest), (action, body, error)
        assert message in error.description


def test_missing_table_is_not_found_but_not_a_missing_dataset(client, tmp_path):
    with pytest.raises(NotFound, match="No Iceberg table") as raised:
        client.load("missing", str(tmp_path / "nothing-here"))
    assert not isinstance(raised.value, DatasetNotFound)


@pytest.mark.parametrize("index, count, message", [(3, 3, "Invalid shard_index: 3"), (-1, 2, "shard_index"), (0, 0, "shard_count")])
def test_bad_shards_are_invalid_requests(client, sample, index, count, message):
    with pytest.raises(InvalidRequest, match=message):
        client.plan(sample, index, count)
    with pytest.raises(InvalidRequest, match=message):
        list(client.read_shard(sample, index, count))


def test_reading_a_loading_dataset_is_not_ready_and_a_patient_read_waits(client, sample_table):
    status = client.load("loading", str(sample_table), batch_rows=1000, wait=False)
    try:
        if status["state"] != "READY":
            try:
                client.plan("loading")
                seen_not_ready = None
            except NotReady as e:
                seen_not_ready = e
            if seen_not_ready is not None:
                assert seen_not_ready.code == "FAILED_PRECONDITION"
                assert "Dataset 'loading' is not ready" in seen_not_ready.description
                assert "slices loaded" in str(seen_not_ready)
        # read_shard plans patiently: it waits for READY instead of failing.
        first = ids_of(client.read_shard("loading", 0, 2))
        second = ids_of(client.read_shard("loading", 1, 2))
        assert (len(first), len(second)) == (ROWS // 2, ROWS - ROWS // 2)
        assert sorted(first + second) == list(range(ROWS))
    finally:
        client.drop("loading")


def test_unreachable_node_is_unavailable():
    from conftest import free_port

    with FloeClient(f"127.0.0.1:{free_port()}", timeout=10, patience=1.0) as c:
        with pytest.raises(floe_client.Unavailable) as raised:
            c.list()
        assert isinstance(raised.value, ConnectionError)
        start = time.monotonic()
        with pytest.raises(floe_client.Unavailable):
            list(c.read_shard("x"))
        assert time.monotonic() - start < 15


def test_too_big_a_dataset_is_resource_exhausted(small_node, sample_table):
    with FloeClient(small_node.address, timeout=120) as c:
        with pytest.raises(ResourceExhausted, match="memory limit") as raised:
            c.load("big", str(sample_table))
        assert raised.value.code == "RESOURCE_EXHAUSTED"
        status = c.status("big")
        assert status["state"] == "FAILED"
        assert status["error"]["kind"] == "RESOURCE_EXHAUSTED"
        # Reading a FAILED dataset answers the status of its failure.
        with pytest.raises(ResourceExhausted, match="failed to load"):
            c.plan("big")
