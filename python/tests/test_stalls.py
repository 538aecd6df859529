"""Readers that stop reading or cancel, against a node whose memory holds one copy of the table and
not two: a stalled stream ends STREAM_STALLED after ``stall-timeout`` and lets go of what it
pinned, so a dropped dataset's memory is free for the next load; hundreds of DoGets cancelled
mid-stream leave the node's Arrow memory where it was."""

from __future__ import annotations

import time

import pyarrow.flight as fl
import pytest

from floe import FloeClient
from floe.errors import code_from_details
from conftest import ROWS, Node

STALL_TIMEOUT_S = 3


def memory(client):
    return client.cluster()["memory"]


def settle(client, expected_bytes, timeout=20.0):
    """Waits until the node holds ``expected_bytes`` of Arrow memory; answers what it holds."""
    deadline = time.monotonic() + timeout
    while (held := memory(client)["arrow_allocated_bytes"]) != expected_bytes and time.monotonic() < deadline:
        time.sleep(0.2)
    return held


@pytest.fixture()
def tight_node(classpath, sample_table, tmp_path, sample, address):
    # Room for one copy of the sample table and a half, not two.
    with FloeClient(address) as c:
        one_copy = c.status(sample)["bytes"]
    node = Node(classpath, tmp_path / "node.log", {
        "floe.memory.limit": str(int(one_copy * 1.5)),
        "floe.gateway.stall-timeout": f"{STALL_TIMEOUT_S}s",
    })
    try:
        node.wait_ready()
        yield node, one_copy
    finally:
        node.stop()


def test_a_stalled_reader_lets_go_of_a_dropped_dataset(tight_node, sample_table):
    node, one_copy = tight_node
    with FloeClient(node.address, timeout=120) as client:
        assert client.load("first", str(sample_table))["state"] == "READY"
        info = client.plan("first")
        flight = fl.connect(node.address)
        try:
            stalled = flight.do_get(info.endpoints[0].ticket)
            stalled.read_chunk()  # one batch, then nothing: the reader stops reading
            client.drop("first")
            time.sleep(STALL_TIMEOUT_S + 2)
            # The server gave up on the stream: what is left in flight, then STREAM_STALLED.
            with pytest.raises(fl.FlightError) as stopped:
                while True:
                    stalled.read_chunk()
            assert code_from_details(stopped.value.extra_info) == "STREAM_STALLED", stopped.value
            assert settle(client, 0) == 0
            status = client.load("second", str(sample_table))
            assert status["state"] == "READY", status
            assert status["rows"] == ROWS
        finally:
            flight.close()


def test_cancelled_streams_leave_memory_where_it_was(tight_node, sample_table):
    node, _ = tight_node
    with FloeClient(node.address, timeout=120) as client:
        assert client.load("cancelled", str(sample_table))["state"] == "READY"
        baseline = memory(client)["arrow_allocated_bytes"]
        info = client.plan("cancelled")
        flight = fl.connect(node.address)
        try:
            for i in range(200):
                reader = flight.do_get(info.endpoints[i % len(info.endpoints)].ticket)
                reader.read_chunk()
                reader.cancel()
        finally:
            flight.close()
        assert settle(client, baseline) == baseline
        assert sum(b.num_rows for b in client.read_shard("cancelled")) == ROWS
        assert "Exception" not in node.tail(200), node.tail(40)
