"""The seeded fuzzer (python/tools/floe_fuzz.py) against a real node: a few thousand malformed
actions, plan descriptors and tickets. Every answer is a success or an error with one of Floe's
codes other than INTERNAL; afterwards the node still serves the dataset exactly, and the Arrow
memory it holds is what the dataset holds (nothing left over from refused requests)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from floe_client import FloeClient
from conftest import ROWS, Node

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import floe_fuzz  # noqa: E402

REQUESTS = 3_000


def test_fuzzed_requests_get_clear_answers_and_leave_nothing_behind(classpath, sample_table, tmp_path):
    # Its own node: fuzzed loads and drops must not disturb the datasets other tests read.
    node = Node(classpath, tmp_path / "node.log", {"floe.memory.limit": "512MiB"})
    try:
        node.wait_ready()
        valid = floe_fuzz.prepare(node.address, str(sample_table))
        with FloeClient(node.address, timeout=30) as client:
            before = client.cluster()["memory"]
        tally = floe_fuzz.run(node.address, REQUESTS, seed=20261124, valid=valid)
        assert tally.requests == REQUESTS
        assert not tally.findings, "\n".join(tally.findings)
        # Most requests are refused, each with its own code; some get through.
        assert tally.ok > 0 and len(tally.codes) >= 4, tally.codes
        with FloeClient(node.address, timeout=60) as client:
            ids = [i for batch in client.read_shard("fuzzed") for i in batch.column(0).to_pylist()]
            assert sorted(ids) == list(range(ROWS))
            # Streams release their buffers as they close: give the last one a moment.
            deadline = time.monotonic() + 15
            while (after := client.cluster()["memory"]) != before and time.monotonic() < deadline:
                time.sleep(0.2)
        assert after == before
    finally:
        node.stop()
