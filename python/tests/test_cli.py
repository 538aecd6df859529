"""The ``floe`` command line against a real node: load with progress, status, list, job, cluster,
drop, ``--json`` output, ``--help`` everywhere, and clear failures with a non-zero exit."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from floe import FloeClient, __version__
from floe.cli import app
from conftest import ROWS

runner = CliRunner()


def floe(address, *args):
    return runner.invoke(app, ["--address", address, *args])


def test_help_and_version():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("load", "status", "list", "drop", "refresh", "jobs", "job", "cluster", "initialize-dataset"):
        assert command in result.output
        assert runner.invoke(app, [command, "--help"]).exit_code == 0
    assert runner.invoke(app, ["--version"]).output.strip() == f"floe {__version__}"


def test_load_status_list_drop(address, sample_table):
    loaded = floe(address, "--json", "load", "cli-events", str(sample_table), "--columns", "id")
    assert loaded.exit_code == 0, loaded.output
    status = json.loads(loaded.stdout)
    assert status["state"] == "READY" and status["rows"] == ROWS
    shown = floe(address, "status", "cli-events")
    assert shown.exit_code == 0 and "READY" in shown.output and f"{ROWS:,}" in shown.output
    listed = json.loads(floe(address, "--json", "list").stdout)
    assert "cli-events" in [d["name"] for d in listed]
    dropped = floe(address, "--json", "drop", "cli-events")
    assert dropped.exit_code == 0, dropped.output
    with FloeClient(address) as client:
        assert "cli-events" not in [d["name"] for d in client.list()]


def test_global_options_anywhere_and_short_help(address, sample_table):
    """As kubectl and gh take them: global flags after the command, ``-h`` everywhere."""
    loaded = runner.invoke(
        app, ["load", "cli-anywhere", str(sample_table), "--columns", "id", "--json", "--address", address]
    )
    assert loaded.exit_code == 0, loaded.output
    assert json.loads(loaded.stdout)["state"] == "READY"
    shown = runner.invoke(app, ["status", "cli-anywhere", f"--address={address}", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["name"] == "cli-anywhere"
    # A command's option keeps its value even when the value looks like a global flag: the filter
    # '--json' reaches the node (and is refused there as a filter), it is not taken as --json.
    refused = runner.invoke(app, ["load", "cli-odd", str(sample_table), "--filter", "--json", "--address", address])
    assert refused.exit_code != 0 and "filter" in refused.output.lower(), refused.output
    assert runner.invoke(app, ["drop", "cli-anywhere", "--address", address]).exit_code == 0
    assert runner.invoke(app, ["-h"]).exit_code == 0
    for command in ("load", "status", "list", "job"):
        helped = runner.invoke(app, [command, "-h"])
        assert helped.exit_code == 0 and "Usage" in helped.output, (command, helped.output)


def test_off_a_terminal_a_message_stays_one_line(address):
    name = "a-dataset-whose-name-alone-is-longer-than-the-eighty-columns-rich-would-wrap-at-x" + "y" * 20
    result = floe(address, "status", name)
    assert result.exit_code != 0
    assert f"No dataset '{name}' is loaded" in result.output.splitlines(), result.output


def test_job_and_cluster(address, job_data):
    with FloeClient(address) as client:
        client.register_job("cli-job", job_data, 1000, mode="dynamic")
    job = floe(address, "--json", "job", "cli-job")
    assert job.exit_code == 0, job.output
    assert json.loads(job.stdout)["job"] == "cli-job"
    assert "cli-job" in floe(address, "job", "cli-job").output
    listed = floe(address, "--json", "jobs")
    assert listed.exit_code == 0, listed.output
    assert "cli-job" in [j["job"] for j in json.loads(listed.stdout)]
    table = floe(address, "jobs")
    assert table.exit_code == 0 and "cli-job" in table.output and "dynamic" in table.output
    view = floe(address, "cluster")
    text = " ".join(view.output.split())  # rich wraps lines at the terminal's width
    assert view.exit_code == 0 and "Up" in text and "bytes of Arrow memory" in text


@pytest.mark.parametrize("args, message", [
    (["status", "no-such-dataset"], "no-such-dataset"),
    (["load", "cli-missing", "/nonexistent/table"], "/nonexistent/table"),
    (["job", "no-such-job"], "no-such-job"),
])
def test_failures_exit_non_zero_with_the_reason(address, args, message):
    result = floe(address, *args)
    assert result.exit_code == 1
    assert message in "".join(result.output.split())  # rich may wrap a long name anywhere


def test_a_load_that_fails_prints_the_nodes_reason(small_node, sample_table):
    """The node's FAILED status carries ``error`` (kind and message); the CLI shows both."""
    result = floe(small_node.address, "load", "cli-too-big", str(sample_table))
    assert result.exit_code == 1
    text = "".join(result.output.split())  # rich wraps long lines anywhere
    assert "FAILED(RESOURCE_EXHAUSTED):" in text, result.output
    with FloeClient(small_node.address) as client:
        message = client.status("cli-too-big")["error"]["message"]
    assert "memory limit" in message and "".join(message.split()) in text, result.output


def test_initialize_dataset_reads_the_trainjob_from_the_environment(address, sample_table):
    """Kubeflow's dataset-initializer step: STORAGE_URI and FLOE_DATASET from the environment, as
    Trainer sets them; progress as log lines (no terminal); exit 0 once READY, 1 when the load
    fails, 2 when the URI is not a table."""
    env = {"STORAGE_URI": str(sample_table), "FLOE_DATASET": "init-events", "FLOE_COLUMNS": "id"}
    result = runner.invoke(app, ["--address", address, "initialize-dataset"], env=env)
    assert result.exit_code == 0, result.output
    assert "Dataset 'init-events' READY" in result.output and f"{ROWS:,} rows" in result.output
    with FloeClient(address) as client:
        assert client.status("init-events")["state"] == "READY"
        client.drop("init-events")
    missing = runner.invoke(app, ["--address", address, "initialize-dataset"],
                            env=dict(env, STORAGE_URI="/nonexistent/table", FLOE_DATASET="init-missing"))
    assert missing.exit_code == 1 and "/nonexistent/table" in missing.output
    other = runner.invoke(app, ["--address", address, "initialize-dataset"],
                          env=dict(env, STORAGE_URI="hf://tatsu-lab/alpaca"))
    assert other.exit_code == 2 and "floe://<catalog>.<db>.<table>" in other.output


@pytest.mark.parametrize("uri, table", [
    ("floe://lake.db.events", "lake.db.events"),
    ("s3://bucket/wh/db/events/metadata/00001-a.metadata.json", "s3://bucket/wh/db/events/metadata/00001-a.metadata.json"),
    ("/data/events", "/data/events"),
])
def test_storage_uris(uri, table):
    from floe.cli import table_of_storage_uri

    assert table_of_storage_uri(uri) == table
