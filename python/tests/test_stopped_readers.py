"""Readers that take one batch of each slice and then neither read, cancel nor disconnect cannot
pin a dataset's memory (issue 21, finding 1): real pyarrow Flight clients against a real node with
the default 64 MiB stream buffer, which holds whole slices, so every stream's source ends long
before its reader stops."""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request

import pyarrow.flight as fl
import pytest

from conftest import JAVA_FLAGS, ROOT, Node, _java, free_port
from floe_client import FloeClient

STALL_TIMEOUT = 5.0
TABLE_ROWS = 2_000_000


def scrape(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    match = re.search(rf"^{re.escape(name)}\s+(\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


@pytest.fixture(scope="module")
def big_table(classpath, tmp_path_factory):
    """Large enough that a slice is more than a pyarrow reader's HTTP/2 windows take."""
    table = tmp_path_factory.mktemp("iceberg-big") / "big"
    result = subprocess.run(
        [_java(), *JAVA_FLAGS, "-Xmx512m", "-cp", classpath, "io.floe.demo.SampleTable",
         str(table), str(TABLE_ROWS), "4", "11"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return table


@pytest.fixture(scope="module")
def watched(classpath, tmp_path_factory):
    port = free_port()
    node = Node(classpath, tmp_path_factory.mktemp("stopped-readers") / "node.log", {
        "floe.management.enabled": "true",
        "pekko.management.http.hostname": "127.0.0.1",
        "pekko.management.http.port": str(port),
        "floe.load.slice-target-size": "16MiB",
        "floe.gateway.stall-timeout": f"{STALL_TIMEOUT:.0f}s",
        "floe.memory.limit": "2GiB",
    })
    try:
        node.wait_ready()
        yield node, port
    finally:
        node.stop()


def stop_after_one_batch(node: Node, info: fl.FlightInfo):
    """One stream per endpoint, one batch taken from each; the clients stay connected."""
    streams = []
    for endpoint in info.endpoints:
        stream = fl.FlightClient(node.address).do_get(endpoint.ticket)
        stream.read_chunk()
        streams.append(stream)
    return streams


def ended_by_the_node(streams) -> int:
    ended = 0
    for stream in streams:
        try:
            while True:
                stream.read_chunk()
        except StopIteration:
            pass
        except fl.FlightError:
            ended += 1
    return ended


def test_a_drop_under_stopped_readers_gives_the_memory_back_within_seconds(watched, big_table):
    node, port = watched
    with FloeClient(node.address, timeout=300) as client:
        baseline = scrape(port, "floe_arrow_allocated_bytes")
        client.load("pinned", str(big_table))
        streams = stop_after_one_batch(node, client.plan("pinned"))
        loaded = scrape(port, "floe_arrow_allocated_bytes") - baseline
        assert loaded > 0

        client.drop("pinned")
        dropped = time.monotonic()
        while scrape(port, "floe_arrow_allocated_bytes") > baseline and time.monotonic() - dropped < 60:
            time.sleep(0.1)
        took = time.monotonic() - dropped
        print(f"{len(streams)} stopped readers, {loaded / 2**20:.1f} MiB: back to the baseline {took:.1f} s after the drop")
        assert scrape(port, "floe_arrow_allocated_bytes") == baseline

        # The node goes on: a load that needs that memory succeeds and reads whole.
        assert client.load("after", str(big_table))["state"] == "READY"
        assert sum(b.num_rows for b in client.read_shard("after")) == TABLE_ROWS
        client.drop("after")
        assert ended_by_the_node(streams) > 0


def test_stopped_readers_stall_with_the_default_stream_buffer(watched, big_table):
    node, port = watched
    stalled = 'floe_streams_ended_total{outcome="stalled"}'
    completed = 'floe_streams_ended_total{outcome="completed"}'
    with FloeClient(node.address, timeout=300) as client:
        client.load("stalling", str(big_table))
        before = scrape(port, stalled), scrape(port, completed)
        streams = stop_after_one_batch(node, client.plan("stalling"))
        stopped = time.monotonic()
        while (scrape(port, stalled) - before[0]) + (scrape(port, completed) - before[1]) < len(streams):
            assert time.monotonic() - stopped < STALL_TIMEOUT + 30, "streams neither stalled nor completed"
            time.sleep(0.2)
        print(f"{scrape(port, stalled) - before[0]:.0f} of {len(streams)} streams stalled"
              f" {time.monotonic() - stopped:.1f} s after their readers stopped (stall-timeout {STALL_TIMEOUT:.0f} s)")
        # Slices larger than what the transport takes at once: at least one stream must stall.
        assert scrape(port, stalled) - before[0] > 0
        # A reader that comes back within the node's reset grace (1 s) still gets its stream's
        # end; one that comes back later finds its stream reset.
        time.sleep(3)
        assert ended_by_the_node(streams) > 0
        client.drop("stalling")
