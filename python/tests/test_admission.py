"""Loads started together on a node with a memory limit (issue 21, finding 6): each needs what its
slices hold once loaded plus what its slices take while they decode; those that fit one after
another end READY and the others are refused MEMORY_EXHAUSTED with what they need and what is free,
every run, rather than all starting, racing for the memory and each failing half-way."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from floe_client import FloeClient
from floe_client.errors import ResourceExhausted
from conftest import Node

# Fixed-width columns only: the table's metadata bounds what they hold exactly.
COLUMNS = ["id", "user_id", "score"]
LOADS = 4
NEEDS = re.compile(r"needs at least [0-9.]+ [KMG]iB \(([0-9,]+) bytes\)")


def test_of_four_loads_started_together_the_one_that_fits_is_ready_and_three_are_refused(
    classpath, sample_table, small_node, node, tmp_path
):
    # The least one load needs, as a node too small for it says; and what it holds once loaded.
    with FloeClient(small_node.address) as small, pytest.raises(ResourceExhausted) as refused:
        small.load("probe", str(sample_table), columns=COLUMNS)
    need = int(NEEDS.search(str(refused.value)).group(1).replace(",", ""))
    with FloeClient(node.address) as c:
        held = c.load("admission-probe", str(sample_table), columns=COLUMNS)["bytes"]
        c.drop("admission-probe")
    assert 0 < held < need

    # One fits; after it, half a load's bytes short of a second.
    limited = Node(classpath, tmp_path / "node.log", {"floe.memory.limit": str(need + held // 2)})
    try:
        limited.wait_ready()

        def load(i):
            with FloeClient(limited.address, timeout=120.0) as client:
                try:
                    return client.load(f"d{i}", str(sample_table), columns=COLUMNS)
                except ResourceExhausted as e:
                    return e

        with ThreadPoolExecutor(LOADS) as pool:
            outcomes = list(pool.map(load, range(LOADS)))

        ready = [o for o in outcomes if isinstance(o, dict)]
        refusals = [o for o in outcomes if isinstance(o, ResourceExhausted)]
        assert [r["state"] for r in ready] == ["READY"], outcomes
        assert len(refusals) == LOADS - 1, outcomes
        for e in refusals:
            assert e.floe_code == "MEMORY_EXHAUSTED", e
            assert f"({need:,} bytes) of Arrow memory" in str(e), e
            assert re.search(r"has [0-9.]+ [KMG]iB \([0-9,]+ bytes\) free", str(e)), e
        with FloeClient(limited.address) as client:
            for i in range(LOADS):
                status = client.status(f"d{i}")
                if status["name"] != ready[0]["name"]:
                    assert status["state"] == "FAILED", status
                    assert f"({need:,} bytes) of Arrow memory" in status["error"]["message"], status
                client.drop(f"d{i}")
    finally:
        limited.stop()
