"""The client speaks each node's protocol version: it asks a node once (``cluster``) and sends
version 2's request fields (``batches_per_message``, ``avoid``) only to nodes of version 2. A node
of version 1 refuses request fields it does not know, so a client that sent them anyway could not
read from a cluster in the middle of a rolling upgrade.

The version-1 node here is a stand-in: a Flight server that answers ``cluster`` without
``protocol_version`` (as version 1 nodes did), refuses unknown command fields as they did
(INVALID_ARGUMENT naming the field, code INVALID_REQUEST) and records what it was sent."""

from __future__ import annotations

import json
import threading

import pyarrow.flight as fl
import pytest

from floe_client import FloeClient, JobSpec
from floe_client.errors import InvalidRequest
from floe_client.jobs import _ChunkFetcher
from conftest import JOB_ROWS, free_port

VERSION_1_FIELDS = {"kind", "job", "epoch", "world_size", "rank", "batch_from", "batch_to", "batch_step"}


class VersionOneNode(fl.FlightServerBase):
    def __init__(self, location):
        super().__init__(location)
        self.commands = []
        self.lock = threading.Lock()

    def do_action(self, context, action):
        if action.type != "cluster":
            raise fl.FlightServerError(f"unexpected action {action.type}")
        view = {"self": "pekko://floe@127.0.0.1:1", "members": [], "unreachable": [], "data_nodes_up": 1,
                "min_data_nodes": 1, "memory": {"arrow_allocated_bytes": 0, "arrow_limit_bytes": 1, "slices_held": 0}}
        return [fl.Result(json.dumps(view).encode())]

    def get_flight_info(self, context, descriptor):
        command = json.loads(descriptor.command)
        with self.lock:
            self.commands.append(command)
        unknown = sorted(set(command) - VERSION_1_FIELDS)
        if unknown:
            raise fl.FlightServerError(
                f"Unknown field '{unknown[0]}' in job read command", extra_info=b'{"code":"INVALID_REQUEST"}')
        # Far enough to show what was sent: this stand-in serves no data.
        raise fl.FlightServerError("stand-in", extra_info=b'{"code":"INVALID_REQUEST"}')


@pytest.fixture()
def version_one_node():
    server = VersionOneNode(f"grpc+tcp://127.0.0.1:{free_port()}")
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_a_node_of_version_1_is_sent_only_version_1_fields(version_one_node):
    address = f"grpc+tcp://127.0.0.1:{version_one_node.port}"
    spec = JobSpec(dataset="jobdata", job="v1-reader", batch_rows=1_000, seed=1)
    with FloeClient(address, timeout=10, patience=2) as client:
        fetcher = _ChunkFetcher(client, spec, 0, 1, 0, 2)
        # A node that a stream could not reach: a version 2 node would be asked to avoid it.
        fetcher._unreachable_now("grpc+tcp://127.0.0.1:9")
        try:
            with pytest.raises(InvalidRequest) as refused:
                fetcher.fetch(range(0, 8))
        finally:
            fetcher.close()
    assert "stand-in" in str(refused.value)
    assert version_one_node.commands, "the client never planned"
    for command in version_one_node.commands:
        assert set(command) <= VERSION_1_FIELDS, command


def test_a_node_of_version_2_says_so_and_is_sent_grouped_reads(address, job_data):
    spec = JobSpec(dataset=job_data, job="v2-reader", batch_rows=1_000, seed=2)
    with FloeClient(address) as client:
        assert client.cluster()["protocol_version"] == 2
        assert client._speaks(address, 2)
        client.register_job_spec(spec)
        ids = [i for _, batch in client.read_job(spec, 0, chunk_batches=8) for i in batch.column("id").to_pylist()]
    assert sorted(ids) == list(range(JOB_ROWS // 1_000 * 1_000))
