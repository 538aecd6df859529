"""How long a reader waits when a data node dies mid-epoch (issue 12): the longest gap between two
batches a training reader sees after a SIGKILL or a SIGTERM of one of three nodes, with Floe's
failure-detection and downing settings and with Pekko's defaults, side by side in one run.

Every scenario starts a fresh three-node cluster of ``./floe node`` processes on 127.0.0.1, loads
a PyIceberg table spread over the three nodes, registers a shuffled job and reads epoch 0 at a
steady pace through a node that stays up. One batch in, the victim is killed: the node holding the
most slices (deterministic mode) or the node holding the job's entity (dynamic mode, where every
batch is leased and acknowledged). The read must still deliver every row exactly once; the figure
is the longest pause between consecutive batches after the kill, against the longest one before.

Run it with ``./floe bench-failover`` (about 9 minutes; ``--only kill-slices,kill-entity`` for
some scenarios); the results go to docs/benchmarks.md by hand, with the machine and the date.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import json
import os
import platform
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from readers import ROOT, FloeNode, ensure_table, free_port  # noqa: E402

from floe_client import FloeClient, JobSpec  # noqa: E402

DATASET = "failover"
BATCH_ROWS = 8_192
PACE_S = 0.2  # a training step per batch: the epoch lasts long enough to straddle the failover
KILL_AFTER = 12  # batches read before the victim is killed
SLICE_TARGET = 1 << 20

# Pekko's own defaults for the settings Floe tunes (pekko-cluster's reference.conf): a crash is
# noticed after about 5.5 s and acted on after stable-after plus the removal margin (which
# defaults to stable-after), about 45 s in all.
PEKKO_DEFAULTS = (
    "-Dpekko.cluster.failure-detector.acceptable-heartbeat-pause=3s",
    "-Dpekko.cluster.split-brain-resolver.stable-after=20s",
    "-Dpekko.cluster.down-removal-margin=20s",
)


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    mode: str  # deterministic | dynamic
    victim: str  # slices | entity | oldest
    signal: int
    java_options: Sequence[str] = ()
    replicas: int = 1


SCENARIOS = (
    Scenario("kill-slices", "SIGKILL, node with most slices, deterministic", "deterministic", "slices", signal.SIGKILL),
    # Each slice on two nodes: the reader moves to the copies as soon as its stream breaks.
    Scenario(
        "kill-slices-replicas", "SIGKILL, node with most slices, deterministic, replicas 2", "deterministic",
        "slices", signal.SIGKILL, replicas=2,
    ),
    Scenario(
        "kill-oldest-replicas", "SIGKILL, oldest node, deterministic, replicas 2", "deterministic", "oldest",
        signal.SIGKILL, replicas=2,
    ),
    Scenario("kill-entity", "SIGKILL, job entity's node, dynamic", "dynamic", "entity", signal.SIGKILL),
    Scenario("term-slices", "SIGTERM, node with most slices, deterministic", "deterministic", "slices", signal.SIGTERM),
    # The oldest node runs sharding's coordinators: losing it moves them too.
    Scenario("kill-oldest", "SIGKILL, oldest node, deterministic", "deterministic", "oldest", signal.SIGKILL),
    Scenario("term-oldest", "SIGTERM, oldest node, deterministic", "deterministic", "oldest", signal.SIGTERM),
    Scenario(
        "kill-slices-pekko", "SIGKILL, node with most slices, Pekko defaults", "deterministic", "slices",
        signal.SIGKILL, PEKKO_DEFAULTS,
    ),
)


@dataclass
class Outcome:
    key: str
    label: str
    rows: int
    exact: bool
    batches: int
    gap_before_s: float
    gap_after_s: float
    kill_to_next_batch_s: float
    epoch_s: float


class Cluster:
    """Three nodes of one cluster, the first the seed."""

    def __init__(self, log_dir: Path, memory_limit: str, java_options: Sequence[str]):
        seed = free_port()
        common = [
            f"-Dpekko.cluster.seed-nodes.0=pekko://floe@127.0.0.1:{seed}",
            # A majority of the three, as docs/kubernetes.md advises: with all three the coordinator
            # would place no shard once a node is gone. Rebalancing spreads slices to the third.
            "-Dpekko.cluster.role.data.min-nr-of-members=2",
            "-Dpekko.cluster.sharding.rebalance-interval=2s",
            "-Dfloe.security.ticket-secret=failover-benchmark-secret-0123456789",
            *java_options,
        ]
        self.nodes: List[FloeNode] = []
        for i in range(3):
            self.nodes.append(
                FloeNode(
                    log_dir / f"node{i}.log", memory_limit, SLICE_TARGET,
                    remote_port=seed if i == 0 else 0, java_options=common,
                )
            )

    def __enter__(self) -> "Cluster":
        try:
            for node in self.nodes:
                node.wait_serving()
            with FloeClient(self.nodes[0].address, timeout=10) as client:
                deadline = time.monotonic() + 120
                while sum(m["status"] == "Up" for m in client.cluster()["members"]) < 3:
                    if time.monotonic() > deadline:
                        raise RuntimeError("The three nodes did not form a cluster in 120 s")
                    time.sleep(0.5)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def by_address(self, address: str) -> FloeNode:
        return next(n for n in self.nodes if n.address == address)

    def entity_holder(self, job: str) -> FloeNode:
        needle = f"Job '{job}' registered on dataset"
        holders = [n for n in self.nodes if needle in n.log.read_text(errors="replace")]
        if len(holders) != 1:
            raise RuntimeError(f"{len(holders)} nodes say they hold job {job}'s entity")
        return holders[0]


def spread_load(cluster: Cluster, metadata_location: str, replicas: int) -> collections.Counter:
    """Loads the table and waits until all three nodes hold slices; answers slices per node (the
    first holder of each)."""
    with FloeClient(cluster.nodes[0].address, timeout=600) as client:
        status = client.load(DATASET, metadata_location, columns=["id", "i", "f"], replicas=replicas)
        if status["state"] != "READY":
            raise RuntimeError(f"The load ended {status['state']}: {status}")
        deadline = time.monotonic() + 90
        while True:
            info = client.plan(DATASET)
            holders = collections.Counter(e.locations[0].uri.decode() for e in info.endpoints)
            if len(holders) == 3 or time.monotonic() > deadline:
                return holders
            time.sleep(0.5)


def run(scenario: Scenario, table, log_root: Path) -> Outcome:
    log_dir = log_root / scenario.key
    with Cluster(log_dir, "1GiB", scenario.java_options) as cluster:
        holders = spread_load(cluster, table.metadata_location, scenario.replicas)
        spec = JobSpec("failover", DATASET, BATCH_ROWS, seed=7, mode=scenario.mode)
        with FloeClient(cluster.nodes[0].address, timeout=60) as client:
            client.register_job_spec(spec)
        if scenario.victim == "slices":
            victim = cluster.by_address(holders.most_common(1)[0][0])
        elif scenario.victim == "oldest":
            victim = cluster.nodes[0]  # the seed, started and joined first
        else:
            victim = cluster.entity_holder(spec.job)
        entry = next(n for n in cluster.nodes if n is not victim)
        print(f"  {scenario.label}: slices per node {dict(holders)}; victim {victim.address}", flush=True)
        times: List[float] = []
        ids: List[int] = []
        killed_at: Optional[float] = None
        started = time.monotonic()
        with FloeClient(entry.address, timeout=60, patience=180) as client:
            if scenario.mode == "dynamic":
                batches = (b for _, b in client.read_dynamic(spec, 0, worker="bench"))
            else:
                # Two batches planned ahead, not the default 32 (twice over): a reader with a deep
                # buffer rides out the whole failover unseen, which would hide what is measured.
                batches = (b for _, b in client.read_job(spec, 0, chunk_batches=2, streams=2))
            for batch in batches:
                times.append(time.monotonic())
                ids.extend(batch.column(0).to_pylist())
                if len(times) == KILL_AFTER:
                    killed_at = time.monotonic()
                    os.killpg(victim.process.pid, scenario.signal)
                time.sleep(PACE_S)
        ended = time.monotonic()
        counts = collections.Counter(ids)
        whole = table.rows // BATCH_ROWS * BATCH_ROWS  # the tail's part batch is dropped
        exact = len(ids) == whole and len(counts) == whole and all(0 <= i < table.rows for i in counts)
        if not exact:
            print(f"  NOT EXACT: {len(ids)} ids, {len(counts)} distinct; expected {whole}", flush=True)
        gaps = [b - a - PACE_S for a, b in zip(times, times[1:])]
        before = max(gaps[: KILL_AFTER - 1], default=0.0)
        after = max(gaps[KILL_AFTER - 1 :], default=0.0)
        next_batch = times[KILL_AFTER] - killed_at - PACE_S if killed_at and len(times) > KILL_AFTER else float("nan")
        return Outcome(
            scenario.key, scenario.label, len(ids), exact, len(times), before, after, next_batch, ended - started
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", help="comma-separated scenario keys")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-failover")
    parser.add_argument("--verbose", action="store_true", help="the client's own log (retries, plans)")
    args = parser.parse_args()
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    table = ensure_table(ROOT / "data" / "bench-readers", args.rows, 32_768)
    wanted = set(args.only.split(",")) if args.only else None
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    log_root = args.out / stamp
    outcomes = []
    for scenario in SCENARIOS:
        if wanted is None or scenario.key in wanted:
            outcome = run(scenario, table, log_root)
            outcomes.append(outcome)
            print(
                f"  -> longest gap after the kill {outcome.gap_after_s:5.1f} s (before {outcome.gap_before_s:.2f} s, "
                f"kill to next batch {outcome.kill_to_next_batch_s:.1f} s), {outcome.rows:,} rows, "
                f"{'exactly once' if outcome.exact else 'NOT exactly once'}",
                flush=True,
            )
    print("\n| scenario | longest gap after | kill to next batch | longest gap before | rows exactly once |")
    print("|---|---:|---:|---:|---|")
    for o in outcomes:
        print(
            f"| {o.label} | {o.gap_after_s:.1f} s | {o.kill_to_next_batch_s:.1f} s | {o.gap_before_s:.2f} s | "
            f"{'yes' if o.exact else 'NO'} ({o.rows:,}) |"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    result = dict(
        date=stamp, machine=f"{os.cpu_count()} cores, {platform.platform()}", python=platform.python_version(),
        rows=table.rows, batch_rows=BATCH_ROWS, pace_s=PACE_S, outcomes=[asdict(o) for o in outcomes],
    )
    (args.out / f"{stamp}.json").write_text(json.dumps(result, indent=1))
    if not all(o.exact for o in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
