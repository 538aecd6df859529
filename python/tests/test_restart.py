"""A whole-cluster restart with state directories (floe.state.dir): two nodes are SIGKILLed at
once, as a power loss would take them, and started again on the same directories. The dataset
comes back READY without being loaded again, and a dynamic job resumes its epoch where it was: the
batches acknowledged before the crash stay acknowledged, the rest are handed out, and the
acknowledged batches hold every row exactly once."""

from __future__ import annotations

import collections
import time

from floe_client import FloeClient, JobSpec
from conftest import ROWS, Node, free_port

BATCH_ROWS = 5_000
BATCHES = ROWS // BATCH_ROWS


def start_cluster(classpath, tmp_path, seed, round_):
    common = {
        "pekko.cluster.seed-nodes.0": f"pekko://floe@127.0.0.1:{seed}",
        "pekko.cluster.role.data.min-nr-of-members": "2",
        "floe.load.slice-target-size": "512KiB",
    }
    nodes = [
        Node(classpath, tmp_path / f"{name}-{round_}.log",
             dict(common, **{"floe.state.dir": str(tmp_path / f"state-{name}"),
                             **({"pekko.remote.artery.canonical.port": str(seed)} if name == "a" else {})}))
        for name in ("a", "b")
    ]
    for node in nodes:
        node.wait_ready()
    with FloeClient(nodes[0].address, timeout=10) as client:
        deadline = time.monotonic() + 120
        while sum(m["status"] == "Up" for m in client.cluster()["members"]) < 2:
            assert time.monotonic() < deadline, "\n".join(n.tail() for n in nodes)
            time.sleep(0.5)
    return nodes


def acknowledge(client, spec, count):
    """Leases and acknowledges ``count`` batches of epoch 0; answers {batch: ids}."""
    done = {}
    for lease, batch in client.read_dynamic(spec, 0, worker="before-crash", auto_ack=False):
        if lease is None:
            continue
        assert client.ack(spec.job, 0, lease.id, "before-crash")["status"] == "acknowledged"
        done[lease.batch] = batch.column(0).to_pylist()
        if len(done) == count:
            break
    return done


def test_datasets_and_jobs_survive_a_restart_of_every_node(classpath, sample_table, tmp_path):
    seed = free_port()
    spec = JobSpec("survivor", "durable", BATCH_ROWS, seed=9, mode="dynamic", columns=("id",))
    nodes = start_cluster(classpath, tmp_path, seed, 1)
    try:
        with FloeClient(nodes[1].address, timeout=300) as client:
            status = client.load("durable", str(sample_table), columns=["id"])
            assert status["state"] == "READY", status
            snapshot = status["snapshot_id"]
            client.register_job_spec(spec)
            before = acknowledge(client, spec, 7)
    finally:
        for node in nodes:  # a crash of every node at once: nothing leaves in order
            node.process.kill()
        for node in nodes:
            node.stop()

    nodes = start_cluster(classpath, tmp_path, seed, 2)
    try:
        with FloeClient(nodes[0].address, timeout=30) as client:
            # Ready nodes list the dataset at once, recovering (PLANNING or LOADING) or READY:
            # never as gone while sharding places its entity again.
            first = {d["name"]: d["state"] for d in client.list()}
            assert first.get("durable") in ("PLANNING", "LOADING", "READY"), first
            deadline = time.monotonic() + 180
            while True:
                listed = {d["name"]: d for d in client.list()}
                if listed.get("durable", {}).get("state") == "READY":
                    break
                assert time.monotonic() < deadline, f"not reloaded: {listed}\n{nodes[0].tail()}"
                time.sleep(1)
            status = client.status("durable")
            assert status["rows"] == ROWS and status["snapshot_id"] == snapshot
            job = client.job_status("survivor", 0)
            assert job["epochs"][0]["acknowledged"] == len(before)
            after = {}
            for lease, batch in client.read_dynamic("survivor", 0, worker="after-restart"):
                if lease is not None:
                    after[lease.batch] = batch.column(0).to_pylist()
        assert not set(before) & set(after)
        assert sorted({**before, **after}) == list(range(BATCHES))
        ids = [i for b in (*before.values(), *after.values()) for i in b]
        assert collections.Counter(ids) == collections.Counter(range(ROWS))
    finally:
        for node in nodes:
            node.kill()
