"""A short soak: three jobs on one dataset (shuffled, ordered, dynamic) read epoch after epoch at
once. The node's Arrow memory after every round is exactly what the dataset holds, and its RSS
stops growing once warm (other tests' datasets share the node, so no round may hold more than the
one before it). ``FLOE_SOAK_ROUNDS`` makes it longer (the CI runs 8 rounds)."""

from __future__ import annotations

import collections
import os
import threading

from floe_client import FloeClient, JobSpec
from conftest import JOB_ROWS

ROUNDS = int(os.environ.get("FLOE_SOAK_ROUNDS", "8"))
WARM_ROUNDS = 3
MIB = 1 << 20


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def read_epoch(address, spec, epoch, results, key):
    with FloeClient(address, timeout=120) as client:
        if spec.dynamic:
            ids = [i for lease, b in client.read_dynamic(spec, epoch, worker=f"soak-{key}") if b is not None
                   for i in b.column(0).to_pylist()]
        else:
            ids = [i for _, b in client.read_job(spec, epoch) for i in b.column(0).to_pylist()]
    results[key] = ids


def test_epochs_of_several_jobs_leave_memory_flat(node, address, job_data):
    specs = [
        JobSpec("soak-shuffled", job_data, 1_000, seed=1, columns=("id", "score")),
        JobSpec("soak-ordered", job_data, 1_000, shuffle=False, columns=("id",)),
        JobSpec("soak-dynamic", job_data, 1_000, seed=2, mode="dynamic", columns=("id", "user_id")),
    ]
    with FloeClient(address, timeout=60) as client:
        for spec in specs:
            client.register_job_spec(spec)
        dataset_bytes = client.cluster()["memory"]["arrow_allocated_bytes"]
        rss = []
        for epoch in range(ROUNDS):
            results = {}
            threads = [threading.Thread(target=read_epoch, args=(address, s, epoch, results, s.job)) for s in specs]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            for spec in specs:
                assert collections.Counter(results[spec.job]) == collections.Counter(range(JOB_ROWS)), spec.job
            # Never more than before the first round (other tests' dropped datasets may still be
            # leaving, so it can be less).
            held = client.cluster()["memory"]["arrow_allocated_bytes"]
            assert held <= dataset_bytes, (epoch, held, dataset_bytes)
            dataset_bytes = held
            rss.append(rss_bytes(node.process.pid))
    grown = max(rss[WARM_ROUNDS:]) - rss[WARM_ROUNDS - 1]
    print(f"RSS per round (MiB): {[r // MIB for r in rss]}")
    assert grown < 64 * MIB, [r // MIB for r in rss]
