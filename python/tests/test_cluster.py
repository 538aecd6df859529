"""A real two-node cluster: a node leaves (SIGTERM) while read_shard reads from it, and the read
still yields every row exactly once (planning again, resuming slices at their new holder)."""

from __future__ import annotations

import collections
import logging
import time

import pytest

from floe_client import FloeClient, JobSpec
from conftest import ROWS, Node, free_port

SETTINGS = {
    "pekko.cluster.role.data.min-nr-of-members": "1",
    "pekko.cluster.sharding.rebalance-interval": "2s",
    "floe.load.slice-target-size": "256KiB",
    "floe.load.retire-linger": "10s",
    "floe.memory.limit": "256MiB",
}


@pytest.fixture()
def two_nodes(classpath, sample_table, tmp_path):
    seed = free_port()
    common = dict(SETTINGS, **{"pekko.cluster.seed-nodes.0": f"pekko://floe@127.0.0.1:{seed}"})
    first = Node(classpath, tmp_path / "a.log", dict(common, **{"pekko.remote.artery.canonical.port": str(seed)}))
    second = Node(classpath, tmp_path / "b.log", common)
    try:
        first.wait_ready()
        second.wait_ready()
        with FloeClient(first.address, timeout=10) as c:
            deadline = time.monotonic() + 120
            while sum(m["status"] == "Up" for m in c.cluster()["members"]) < 2:
                assert time.monotonic() < deadline, f"no 2-node cluster:\n{first.tail()}\n{second.tail()}"
                time.sleep(0.5)
        yield first, second
    finally:
        second.kill()
        first.kill()


def load_spread(address, table, name):
    """Loads the table and waits until both nodes hold slices of it; answers the slices per node.

    With a sharding minimum of 1, a node that is Up but whose shard region has not yet registered
    gets no slice at first; the rebalance (every 2 s here) then moves some to it."""
    with FloeClient(address, timeout=120) as client:
        assert client.load(name, str(table), columns=["id"], batch_rows=500)["state"] == "READY"
        deadline = time.monotonic() + 90
        while True:
            info = client.plan(name)
            holders = collections.Counter(e.locations[0].uri.decode() for e in info.endpoints)
            if len(holders) == 2 or time.monotonic() > deadline:
                return holders
            time.sleep(0.5)


def entity_holder(nodes, name):
    holders = [n for n in nodes if f"Dataset '{name}': planning" in n.log.read_text(errors="replace")]
    assert len(holders) == 1, [n.tail() for n in nodes]
    return holders[0]


def read_while_leaving(entry, leaving, name):
    """Reads the whole dataset through ``entry``; SIGTERMs ``leaving`` after the first rows and
    reads slowly until it is gone, so that some endpoints are read from it or planned at it."""
    ids = []
    with FloeClient(entry.address, timeout=60, patience=120) as client:
        left = False
        for batch in client.read_shard(name):
            ids.extend(batch.column(0).to_pylist())
            if len(ids) >= 2_000 and not left:
                leaving.process.terminate()  # SIGTERM: the node leaves the cluster in order
                left = True
            if left and leaving.process.poll() is None:
                time.sleep(0.05)
    assert leaving.process.wait(timeout=90) is not None
    return ids


def test_a_node_leaving_mid_read_loses_no_row_and_repeats_none(two_nodes, sample_table, caplog):
    """The node that leaves holds slices and is the reader's entry node; the survivor holds the
    dataset's entity. The reader plans again through the survivor, which it saw in the plan."""
    caplog.set_level(logging.INFO, logger="floe_client")
    holders = load_spread(two_nodes[0].address, sample_table, "spread")
    assert all(holders[n.address] > 0 for n in two_nodes), holders
    survivor = entity_holder(two_nodes, "spread")
    leaving = two_nodes[1] if survivor is two_nodes[0] else two_nodes[0]

    ids = read_while_leaving(leaving, leaving, "spread")

    assert len(ids) == ROWS
    assert collections.Counter(ids) == collections.Counter(range(ROWS))
    replans = [r.getMessage() for r in caplog.records if "planning again" in r.getMessage()]
    assert replans, "the read never had to plan again: the node left after the read ended"
    with FloeClient(survivor.address, timeout=60) as client:
        deadline = time.monotonic() + 120
        # A fresh READY: a node answers from its last known status ("stale") while the
        # dataset's entity is moving.
        while (lambda s: s["state"] != "READY" or s.get("stale"))(client.status("spread")):
            assert time.monotonic() < deadline
            time.sleep(0.5)
        # Every slice ends up on the survivor (a plan may come from the last known layout while
        # the entity is busy, as the status may).
        while {e.locations[0].uri.decode() for e in client.plan("spread").endpoints} != {survivor.address}:
            assert time.monotonic() < deadline, client.plan("spread").endpoints
            time.sleep(0.5)


def test_a_dataset_whose_entity_node_leaves_recovers(two_nodes, sample_table):
    load_spread(two_nodes[0].address, sample_table, "orphan")
    leaving = entity_holder(two_nodes, "orphan")
    survivor = two_nodes[1] if leaving is two_nodes[0] else two_nodes[0]
    ids = read_while_leaving(survivor, leaving, "orphan")
    assert collections.Counter(ids) == collections.Counter(range(ROWS))


def test_a_job_read_goes_on_while_a_node_leaves(two_nodes, sample_table, caplog):
    """A deterministic job read through the survivor while the other node leaves: the job's
    entity is on the leaving node (it starts again on the survivor from the job's replicated
    record), and so are some slices (their streams may fail and their chunks be planned again).
    Every batch comes once, in order, and the epoch holds every row once."""
    caplog.set_level(logging.INFO, logger="floe_client")
    load_spread(two_nodes[0].address, sample_table, "job-spread")
    survivor = entity_holder(two_nodes, "job-spread")
    leaving = two_nodes[1] if survivor is two_nodes[0] else two_nodes[0]
    with FloeClient(survivor.address, timeout=60, patience=120) as client:
        # Jobs are placed by their id: take one whose entity is on the leaving node.
        specs = [JobSpec(f"leave-{i}", "job-spread", 1000, seed=i, block_rows=1000, window_blocks=4) for i in range(12)]
        layouts = {client.register_job_spec(spec)["layout"] for spec in specs}
        log = leaving.log.read_text(errors="replace")
        spec = next(s for s in specs if f"Job '{s.job}' registered" in log)
        ks, ids = [], []
        left = False
        for k, batch in client.read_job(spec, 0, chunk_batches=4):
            ks.append(k)
            ids.extend(batch.column(0).to_pylist())
            if len(ks) == 6 and not left:
                leaving.process.terminate()  # SIGTERM: the node leaves the cluster in order
                left = True
            if left and leaving.process.poll() is None:
                time.sleep(0.05)
        assert leaving.process.wait(timeout=90) is not None
        status = client.job_status(spec.job)
    assert ks == list(range(ROWS // 1000))
    assert collections.Counter(ids) == collections.Counter(range(ROWS))
    assert status["batches_per_epoch"] == ROWS // 1000
    assert {status["layout"]} == layouts
    # The job's record outlived its entity's node: the reader never had to register it again.
    messages = [r.getMessage() for r in caplog.records]
    assert not any("is unknown to the cluster" in m for m in messages), messages


def test_a_load_with_a_long_filter_reaches_slices_on_another_node(two_nodes, sample_table):
    """A filter at the size limits (about a thousand terms) travels to the slices on the other
    node inside their load messages: nothing may be dropped for being larger than the transport's
    frames, or the load would never become READY."""
    first, second = two_nodes
    excluded = range(1, 41, 2)
    # About 60 KiB of text (the limit is 64 KiB and 1,024 terms); its JSON form is larger still,
    # and every file task of a slice carries its residual filter again.
    long_filter = " and ".join(
        [f"id != {i}" for i in excluded]
        + [f"lang != 'not-a-language-{i:05d}-{'x' * 22}'" for i in range(1000)]
    )
    assert 55_000 < len(long_filter) < 64 * 1024
    with FloeClient(first.address, timeout=120) as client:
        status = client.load("filtered-far", str(sample_table), columns=["id"], batch_rows=500, filter=long_filter)
        assert status["state"] == "READY", status
        assert status["rows"] == ROWS - len([i for i in excluded if i < ROWS])
        # Slices a rebalance moves to the second node load there from the same messages.
        deadline = time.monotonic() + 90
        while len(holders := {e.locations[0].uri for e in client.plan("filtered-far").endpoints}) < 2:
            assert time.monotonic() < deadline, f"one holder only: {holders}\n{second.tail()}"
            time.sleep(0.5)
        assert client.status("filtered-far")["state"] == "READY"
