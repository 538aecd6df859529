"""Readers that stop reading or cancel: a stalled stream pins its slice after a drop only until
``stall-timeout`` ends it (STREAM_STALLED), then the dropped dataset's memory is all free for the
next load; hundreds of DoGets cancelled mid-stream leave the node's Arrow memory where it was."""

from __future__ import annotations

import time

import pyarrow.flight as fl
import pytest

from floe_client import FloeClient
from floe_client.errors import code_from_details
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
    with FloeClient(address) as c:
        one_copy = c.status(sample)["bytes"]
    node = Node(classpath, tmp_path / "node.log", {
        "floe.memory.limit": str(int(one_copy * 6)),
        "floe.gateway.stall-timeout": f"{STALL_TIMEOUT_S}s",
        # A stream waits for its reader after 256 KiB, so a reader that stops stalls it at once.
        "floe.flight.stream-buffer": "256KiB",
        # One slice for the whole table: a stream far longer than what sockets and HTTP/2 windows
        # take in before the reader must read.
        "floe.load.slice-target-size": "256MiB",
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
        # Without BDP probing the reader's HTTP/2 window stays at 64 KiB, so the transport cannot
        # take in most of the stream on the reader's behalf (with it, windows grow to megabytes and
        # a stream of this table could fit in them before the reader stops).
        flight = fl.connect(node.address, generic_options=[("grpc.http2.bdp_probe", 0)])
        try:
            stalled = flight.do_get(info.endpoints[0].ticket)
            stalled.read_chunk()  # one batch, then nothing: the reader stops reading
            client.drop("first")
            # The stream pins its slice: dropped, but not yet freed.
            assert memory(client)["arrow_allocated_bytes"] > 0
            time.sleep(STALL_TIMEOUT_S + 2)
            # The server gave up on the stream (its slice was dropped, then it stalled) and reset it
            # a second later, dropping what was queued: the reader, back too late, is told the call
            # was cancelled (docs/protocol.md, DoGet), or, had it come back within that
            # second, SLICE_NOT_HELD or STREAM_STALLED with the rows in flight before it.
            with pytest.raises(fl.FlightError) as stopped:
                while True:
                    stalled.read_chunk()
            code = code_from_details(stopped.value.extra_info)
            assert code in ("SLICE_NOT_HELD", "STREAM_STALLED") or (
                code is None and isinstance(stopped.value, fl.FlightCancelledError)
            ), stopped.value
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
