"""Logs as JSON with FLOE_LOG_FORMAT=json: every line is one object with a timestamp, level,
logger and message, the node's name, and the dataset, job or slice it concerns as fields."""

from __future__ import annotations

import datetime as dt
import json

from floe import FloeClient
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
    for entry in entries:
        assert {"timestamp", "level", "loggerName", "formattedMessage"} <= set(entry), entry
        assert entry["context"]["properties"]["node"] == "floe-7"
        when = dt.datetime.fromtimestamp(entry["timestamp"] / 1000, dt.timezone.utc)
        assert abs((dt.datetime.now(dt.timezone.utc) - when).total_seconds()) < 3600
    ready = [e for e in entries if "READY" in e["formattedMessage"] and e.get("mdc", {}).get("dataset") == "logged"]
    assert ready, [e["formattedMessage"] for e in entries][-20:]
    registered = [e for e in entries if e.get("mdc", {}).get("job") == "logged-job"]
    assert any("registered" in e["formattedMessage"] for e in registered)
    # Nothing but JSON on the node's stderr once logging is up (Pekko's and gRPC's lines too).
    stray = [line for line in node.log.read_text().splitlines() if line.strip() and not line.startswith("{")]
    # Logback's own status lines ("... |-WARN in ...") would mean its configuration warned.
    assert not [line for line in stray if line[:2].isdigit() or "|-" in line], stray[:5]
