"""A node's /metrics on its management port: the exposition passes Prometheus' own checker
(promtool), its figures follow a load and a read, and a real Prometheus server scraping the node
on 127.0.0.1 answers a query on a Floe metric."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request

import pytest

from floe_client import FloeClient
from conftest import ROWS, Node, free_port


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers.get_content_type() == "text/plain"
        return answer.read().decode()


def value(text: str, name: str, labels: str = "") -> float:
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)}\s+(\S+)$", text, re.MULTILINE)
    assert match, f"{name}{labels} not in the exposition"
    return float(match.group(1))


@pytest.fixture(scope="module")
def metered(classpath, sample_table, tmp_path_factory):
    port = free_port()
    node = Node(classpath, tmp_path_factory.mktemp("metrics") / "node.log", {
        "floe.management.enabled": "true",
        "pekko.management.http.hostname": "127.0.0.1",
        "pekko.management.http.port": str(port),
    })
    try:
        node.wait_ready()
        with FloeClient(node.address, timeout=120) as client:
            assert client.load("metered", str(sample_table), columns=["id"])["state"] == "READY"
            assert sum(b.num_rows for b in client.read_shard("metered")) == ROWS
            client.register_job("metered-job", "metered", 10_000, mode="dynamic")
            leased = sum(b.num_rows for lease, b in client.read_dynamic("metered-job", 0) if b is not None)
            assert leased == ROWS
        yield node, port
    finally:
        node.stop()


def test_the_exposition_passes_promtool_and_counts_what_was_served(metered):
    node, port = metered
    text = scrape(port)
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: .ci/install-prometheus installs Debian's prometheus package"
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert value(text, "floe_served_rows_total") >= ROWS
    assert value(text, "floe_served_bytes_total") > 0
    assert value(text, "floe_streams_ended_total", '{outcome="completed"}') >= 1
    assert value(text, "floe_streams_open") == 0
    assert value(text, "floe_slices_held") >= 1
    assert 0 < value(text, "floe_arrow_allocated_bytes") <= value(text, "floe_arrow_limit_bytes")
    assert value(text, "floe_cluster_members_up") == 1
    assert "jvm_memory_used_bytes" in text and "jvm_gc_pause_seconds" in text
    # Slice loads by cause, plans and actions, with histograms for their latencies.
    loads = value(text, "floe_slice_load_seconds_count", '{cause="requested",outcome="loaded"}')
    assert loads >= 1
    assert value(text, "floe_slice_loaded_rows_total", '{cause="requested"}') == ROWS
    assert value(text, "floe_slice_loaded_bytes_total", '{cause="requested"}') > 0
    assert 'floe_slice_load_seconds_bucket{cause="requested",outcome="loaded",le="+Inf"}' in text
    assert value(text, "floe_plan_seconds_count", '{kind="shard",outcome="answered"}') >= 1
    assert value(text, "floe_action_seconds_count", '{action="load",outcome="answered"}') == 1
    # A job's counters, labelled by job, from the node holding its entity.
    assert value(text, "floe_job_rows_acknowledged_total", '{job="metered-job"}') == ROWS
    assert value(text, "floe_job_rows_leased_total", '{job="metered-job"}') == ROWS
    assert value(text, "floe_job_rows_reissued_total", '{job="metered-job"}') == 0
    # Latency histograms have a dozen fixed buckets, not some 70 per timer and tag set (an idle node
    # exposed 2,632 lines, 1,794 of them one histogram's buckets).
    buckets = re.findall(r'^floe_slice_load_seconds_bucket\{cause="requested",outcome="loaded",le="[^"]+"\}',
                         text, re.MULTILINE)
    assert len(buckets) == 16, buckets
    assert sum(1 for line in text.splitlines() if "_bucket{" in line) < 600
    # Every meter says what it is.
    for name in set(re.findall(r"^# TYPE (\S+)", text, re.MULTILINE)):
        assert re.search(rf"^# HELP {re.escape(name)} \S", text, re.MULTILINE), name


def test_the_grafana_dashboard_uses_only_metrics_the_node_exposes(metered):
    """k8s/grafana/floe-dashboard.json: every series its queries name is in a node's exposition."""
    import json
    from pathlib import Path

    node, port = metered
    text = scrape(port)
    exposed = set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{|\s)", text, re.MULTILINE))
    dashboard = json.loads((Path(__file__).resolve().parents[2] / "k8s" / "grafana" / "floe-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    named = {n for e in exprs for n in re.findall(r"\b((?:floe|jvm|process)_[a-z0-9_]+)", e)}
    assert named and not named - exposed, sorted(named - exposed)


def test_a_prometheus_server_scrapes_the_node(metered, tmp_path):
    node, port = metered
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: .ci/install-prometheus installs Debian's prometheus package"
    web = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n"
        f"  - job_name: floe\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    log = open(tmp_path / "prometheus.log", "wb")
    server = subprocess.Popen(
        [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{web}",
         f"--storage.tsdb.path={tmp_path / 'data'}"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{web}/api/v1/query?query=floe_served_rows_total", timeout=5
                ) as answer:
                    import json

                    result = json.loads(answer.read())["data"]["result"]
                if result:
                    assert float(result[0]["value"][1]) >= ROWS
                    assert result[0]["metric"]["job"] == "floe"
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "prometheus.log").read_text()[-3000:]
            time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
