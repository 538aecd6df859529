"""Logs as JSON with FLOE_LOG_FORMAT=json: every line is one object with the keys log collectors
read by themselves (@timestamp for Elastic, time and severity for Google Cloud Logging, level for
Loki and Elastic, message), the logger, the node's name, and the dataset, job or slice it concerns
as top-level fields."""

from __future__ import annotations

import datetime as dt
import json

from floe_client import FloeClient
from conftest import Node


def test_json_logs_carry_the_node_and_what_each_line_is_about(classpath, sample_table, tmp_path):
    node = Node(classpath, tmp_path / "node.log", env={"FLOE_LOG_FORMAT": "json", "FLOE_NODE_NAME": "floe-7"})
    try:
        node.wait_ready()
        with FloeClient(node.address, timeout=120) as client:
            assert client.load("logged", str(sample_table), columns=["id"])["state"] == "READY"
            client.register_job("logged-job", "logged", 1000)
    finally:
        node.stop()
    lines = [line for line in node.log.read_text().splitlines() if line.startswith("{")]
    assert len(lines) > 10
    entries = [json.loads(line) for line in lines]  # every one parses
    severities = {"DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR"}
    for entry in entries:
        assert {"@timestamp", "time", "level", "severity", "message", "logger", "thread"} <= set(entry), entry
        assert entry["node"] == "floe-7"
        assert entry["severity"] == severities[entry["level"]], entry
        when = dt.datetime.fromisoformat(entry["@timestamp"].replace("Z", "+00:00"))
        assert when.utcoffset() == dt.timedelta(0), entry["@timestamp"]
        assert entry["time"] == entry["@timestamp"]
        assert abs((dt.datetime.now(dt.timezone.utc) - when).total_seconds()) < 3600
    ready = [e for e in entries if "READY" in e["message"] and e.get("dataset") == "logged"]
    assert ready, [e["message"] for e in entries][-20:]
    registered = [e for e in entries if e.get("job") == "logged-job"]
    assert any("registered" in e["message"] for e in registered)
    # Nothing but JSON on the node's stderr once logging is up (Pekko's and gRPC's lines too).
    stray = [line for line in node.log.read_text().splitlines() if line.strip() and not line.startswith("{")]
    # Logback's own status lines ("... |-WARN in ...") would mean its configuration warned.
    assert not [line for line in stray if line[:2].isdigit() or "|-" in line], stray[:5]
