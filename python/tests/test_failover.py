"""A data node SIGKILLed mid-epoch under a training job of two torch ranks with two DataLoader
workers each, on a real three-node cluster: every rank's process finishes its epoch and every row
arrives exactly once. Deterministic mode loses the node holding the most slices; dynamic mode loses
the node holding the job's entity (its leases and acknowledgements). The longest gap a rank saw is
printed; the 10 s bound is judged by python/benchmarks/failover.py, not here."""

from __future__ import annotations

import collections
import json
import time

import pytest

pytest.importorskip("torch")

from floe_client import FloeClient, JobSpec  # noqa: E402
from conftest import ROWS, Node, free_port  # noqa: E402
from ranks import finish_ranks, start_ranks  # noqa: E402

BATCH_ROWS = 2_000
BATCHES = ROWS // BATCH_ROWS
COLUMNS = ["id", "user_id", "score"]
KILL_AT = 12  # batches rank 0 has taken when the victim dies
SETTINGS = {
    # A majority of three, as docs/kubernetes.md advises; rebalancing spreads slices to the third.
    "pekko.cluster.role.data.min-nr-of-members": "2",
    "pekko.cluster.sharding.rebalance-interval": "2s",
    "floe.load.slice-target-size": "256KiB",
    "floe.memory.limit": "256MiB",
}


class Cluster:
    def __init__(self, classpath, tmp_path, **settings):
        seed = free_port()
        common = dict(SETTINGS, **settings, **{"pekko.cluster.seed-nodes.0": f"pekko://floe@127.0.0.1:{seed}"})
        self.nodes = [
            Node(classpath, tmp_path / f"node{i}.log",
                 dict(common, **({"pekko.remote.artery.canonical.port": str(seed)} if i == 0 else {})))
            for i in range(3)
        ]

    def start(self):
        for node in self.nodes:
            node.wait_ready()
        with FloeClient(self.nodes[0].address, timeout=10) as client:
            deadline = time.monotonic() + 120
            while sum(m["status"] == "Up" for m in client.cluster()["members"]) < 3:
                assert time.monotonic() < deadline, "no 3-node cluster:\n" + self.tails()
                time.sleep(0.5)

    def kill(self):
        for node in self.nodes:
            node.kill()

    def tails(self):
        return "\n".join(f"--- {n.address}\n{n.tail(25)}" for n in self.nodes)

    def at(self, address):
        return next(n for n in self.nodes if n.address == address)

    def job_entity_node(self, job):
        needle = f"Job '{job}' registered on dataset"
        holders = [n for n in self.nodes if needle in n.log.read_text(errors="replace")]
        assert len(holders) == 1, self.tails()
        return holders[0]


@pytest.fixture()
def cluster(classpath, sample_table, tmp_path):
    nodes = Cluster(classpath, tmp_path)
    try:
        nodes.start()
        with FloeClient(nodes.nodes[0].address, timeout=300) as client:
            status = client.load("killed", str(sample_table), columns=COLUMNS, batch_rows=BATCH_ROWS)
            assert status["state"] == "READY", status
        yield nodes
    finally:
        nodes.kill()


def slices_per_node(cluster):
    """Waits until all three nodes hold slices of the dataset; answers slices per node."""
    with FloeClient(cluster.nodes[0].address, timeout=30) as client:
        deadline = time.monotonic() + 90
        while True:
            info = client.plan("killed")
            holders = collections.Counter(e.locations[0].uri.decode() for e in info.endpoints)
            if len(holders) == 3:
                return holders
            assert time.monotonic() < deadline, f"slices on {dict(holders)} only"
            time.sleep(0.5)


def kill_mid_epoch(victim, ranks, progress, tmp_path):
    """SIGKILLs ``victim`` once rank 0 has taken ``KILL_AT`` batches; answers the time."""
    deadline = time.monotonic() + 240
    while True:
        try:
            if int(progress.read_text() or 0) >= KILL_AT:
                break
        except (OSError, ValueError):
            pass
        ended = [r for r in ranks if r.poll() is not None]
        assert not ended, "a rank ended before the kill:\n" + ended[0].communicate()[0].decode(errors="replace")[-3000:]
        assert time.monotonic() < deadline, "the ranks did not get going"
        time.sleep(0.05)
    killed = time.time()
    victim.process.kill()
    victim.process.wait(timeout=30)
    return killed


def longest_gap_after(results, killed):
    gaps = []
    for result in results:
        times = [killed] + [t for t in result["epochs"][0]["times"] if t > killed]
        gaps.extend(b - a for a, b in zip(times, times[1:]))
    return max(gaps, default=0.0)


def run_job(cluster, job, victim_of, tmp_path):
    """Registers ``job``, picks the victim, runs two ranks through a surviving node and kills the
    victim mid-epoch; answers the ranks' results."""
    holders = slices_per_node(cluster)
    job = dict(job, columns=COLUMNS)
    spec = JobSpec(dataset="killed", **job)
    with FloeClient(cluster.nodes[0].address, timeout=60) as client:
        client.register_job_spec(spec)
    victim = victim_of(cluster, holders, spec.job)
    entry = next(n for n in cluster.nodes if n is not victim)
    progress = tmp_path / "progress"
    config = dict(address=entry.address, dataset="killed", job=job, epochs=[0], num_workers=2, pace=0.1)
    ranks = start_ranks([dict(config, progress=str(progress)), config], tmp_path, spec.job)
    killed = kill_mid_epoch(victim, ranks, progress, tmp_path)
    results = finish_ranks(ranks, timeout=300)
    print(f"{spec.job}: slices per node {dict(holders)}; killed {victim.address}; "
          f"longest gap after the kill {longest_gap_after(results, killed):.1f} s")
    return results


def most_slices(cluster, holders, job):
    return cluster.at(holders.most_common(1)[0][0])


def job_entity(cluster, holders, job):
    return cluster.job_entity_node(job)


def test_deterministic_epoch_survives_the_node_with_most_slices(cluster, tmp_path):
    job = dict(job="det-kill", batch_rows=BATCH_ROWS, seed=3)
    results = run_job(cluster, job, most_slices, tmp_path)
    ids = []
    for result in results:
        batches = result["epochs"][0]["batches"]
        assert len(batches) == BATCHES and all(len(b) == BATCH_ROWS // 2 for b in batches)
        ids.extend(i for b in batches for i in b)
    assert collections.Counter(ids) == collections.Counter(range(ROWS))


def test_dynamic_epoch_survives_the_node_of_the_jobs_entity(cluster, tmp_path):
    job = dict(job="dyn-kill", batch_rows=BATCH_ROWS, seed=4, mode="dynamic", lease_timeout_ms=60_000)
    results = run_job(cluster, job, job_entity, tmp_path)
    acknowledged = {}
    for result in results:
        epoch = result["epochs"][0]
        assert len(result["answers"]) == len(epoch["batches"])
        for (batch, answer), ids in zip(result["answers"], epoch["batches"]):
            if answer == "acknowledged":
                assert batch not in acknowledged, json.dumps(result["answers"])
                acknowledged[batch] = ids
    assert sorted(acknowledged) == list(range(BATCHES))
    ids = [i for b in acknowledged.values() for i in b]
    assert collections.Counter(ids) == collections.Counter(range(ROWS))
    with FloeClient(cluster.nodes[0].address if cluster.nodes[0].process.poll() is None
                    else cluster.nodes[1].address, timeout=60) as client:
        status = client.job_status("dyn-kill", 0)
    assert status["counters"]["rows_acknowledged"] == ROWS


@pytest.fixture()
def replicated(classpath, sample_table, tmp_path):
    """The three-node cluster with the table loaded as two replicas: each slice on two nodes. Its
    failure detector waits 20 s (not 2 s), so a reader that finishes while the killed node is still
    a member did not wait for the cluster to notice."""
    nodes = Cluster(classpath, tmp_path, **{"pekko.cluster.failure-detector.acceptable-heartbeat-pause": "20s"})
    try:
        nodes.start()
        with FloeClient(nodes.nodes[0].address, timeout=300) as client:
            status = client.load("copies", str(sample_table), columns=COLUMNS, batch_rows=BATCH_ROWS, replicas=2)
            assert status["state"] == "READY" and status["replicas"] == 2, status
        yield nodes
    finally:
        nodes.kill()


def holders_of_each_slice(client, dataset):
    return [tuple(location.uri.decode() for location in e.locations) for e in client.plan(dataset).endpoints]


def test_with_two_replicas_a_killed_node_costs_no_row_and_its_copies_are_rebuilt(replicated, tmp_path):
    """Every slice is on two different nodes; SIGKILL of the node holding the most first copies,
    mid-epoch: the job's read goes on from the copies without waiting for the cluster to notice (the
    longest gap is printed; docs/benchmarks.md measures it with ./floe bench-failover), every row
    arrives exactly once (and once in a plain read of the whole dataset), and once the node is
    downed its copies load again on the survivors, one on each."""
    entry = replicated.nodes[0]
    with FloeClient(entry.address, timeout=60) as client:
        slices = holders_of_each_slice(client, "copies")
        assert all(len(set(holders)) == 2 for holders in slices), slices
        first = collections.Counter(holders[0] for holders in slices)
        victim = replicated.at(first.most_common(1)[0][0])
        if victim is entry:
            entry = next(n for n in replicated.nodes if n is not victim)
    spec = JobSpec(dataset="copies", job="replicated", batch_rows=BATCH_ROWS, seed=5, columns=COLUMNS)
    ids, times, killed, members = [], [], None, None
    with FloeClient(entry.address, timeout=60, patience=120) as client:
        client.register_job_spec(spec)
        for _, batch in client.read_job(spec, 0, chunk_batches=2, streams=2):
            times.append(time.time())
            ids.extend(batch.column("id").to_pylist())
            if len(times) == KILL_AT:
                killed = time.time()
                victim.process.kill()
                victim.process.wait(timeout=30)
            elif len(times) == KILL_AT + 6:
                # Three chunks planned and read since the kill, each from every node's slices (the
                # victim held the most first copies): the read went on before the cluster noticed.
                members = len(client.cluster()["members"])
        assert members == 3, "the reader waited for the killed node to be downed"
        assert collections.Counter(ids) == collections.Counter(range(ROWS))
        plain = [i for b in client.read_shard("copies") for i in b.column("id").to_pylist()]
        assert collections.Counter(plain) == collections.Counter(range(ROWS))
        gaps = [b - a for a, b in zip([killed] + [t for t in times if t > killed], [t for t in times if t > killed])]
        print(f"replicas 2: killed {victim.address} holding {first[victim.address]} first copies; "
              f"longest gap after the kill {max(gaps, default=0):.2f} s")

        survivors = {n.address for n in replicated.nodes if n is not victim}
        deadline = time.monotonic() + 120
        while True:
            status = client.status("copies")
            slices = holders_of_each_slice(client, "copies") if status["state"] == "READY" else []
            if slices and all(set(holders) == survivors for holders in slices):
                break
            assert time.monotonic() < deadline, f"copies not rebuilt: {status}\n{replicated.tails()}"
            time.sleep(0.5)
