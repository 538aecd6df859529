"""The ``floe`` command line against a real node: load with progress, status, list, job, cluster,
drop, ``--json`` output, ``--help`` everywhere, and clear failures with a non-zero exit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import List

import pytest
from typer.testing import CliRunner

from floe_client import FloeClient, __version__
from floe_client.cli import app, size
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
    shown = floe(address, "job", "cli-job").output
    assert "cli-job" in shown and "registered by default/anonymous" in shown
    listed = floe(address, "--json", "jobs")
    assert listed.exit_code == 0, listed.output
    assert "cli-job" in [j["job"] for j in json.loads(listed.stdout)]
    table = floe(address, "jobs")
    assert table.exit_code == 0 and "cli-job" in table.output and "dynamic" in table.output
    view = floe(address, "cluster")
    text = " ".join(view.output.split())  # rich wraps lines at the terminal's width
    assert view.exit_code == 0 and "Up" in text and "of Arrow memory held" in text


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
    """The node's FAILED status carries ``error`` (kind and message); the CLI shows both. (With a
    filter: without one, the node refuses the load before it starts, as the next test shows.)"""
    result = floe(small_node.address, "load", "cli-too-big", str(sample_table), "--filter", "id >= 0")
    assert result.exit_code == 1
    text = "".join(result.output.split())  # rich wraps long lines anywhere
    assert "FAILED(RESOURCE_EXHAUSTED):" in text, result.output
    with FloeClient(small_node.address) as client:
        message = client.status("cli-too-big")["error"]["message"]
    assert "memory limit" in message and "".join(message.split()) in text, result.output


def test_sizes_read_as_people_read_them():
    assert [size(n) for n in (0, 512, 1024, 1_785_856, 4 * 1024**3, 3 * 1024**5)] == [
        "0 B", "512 B", "1.0 KiB", "1.7 MiB", "4.0 GiB", "3.0 PiB"]


def test_the_shell_completes_commands_and_options():
    """``floe --install-completion`` / ``--show-completion`` (bash, zsh, fish); what the shell then
    asks the script is answered from the same commands, global options anywhere included."""
    script = shutil.which("floe", path=os.path.dirname(sys.executable))
    assert script, "the floe console script is installed beside the interpreter"

    def complete(words: str) -> List[str]:
        env = dict(os.environ, _FLOE_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - 1))
        done = subprocess.run([script], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("floe st") == ["status"]
    assert complete("floe --json st") == ["status"]
    assert {"--columns", "--filter", "--wait"} <= set(complete("floe load events /t --"))
    shown = subprocess.run([script, "--show-completion", "bash"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "_floe_completion" in shown.stdout, shown.stderr


def test_a_load_that_cannot_fit_is_refused_with_what_it_needs(small_node, sample_table):
    """Without a filter the node knows from the table's metadata that the dataset cannot fit in its
    free memory and refuses the load at once (once it has shared its memory, within seconds)."""
    deadline = time.monotonic() + 30
    while True:
        result = floe(small_node.address, "load", "cli-never-fits", str(sample_table))
        text = "".join(result.output.split())
        if "needsatleast" in text or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result.exit_code == 1
    assert "RESOURCE_EXHAUSTED" in text and "needsatleast" in text, result.output
    assert "freeofits1.0MiBmemorylimit" in text, result.output


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


def metadata_file(table) -> str:
    """The table's current metadata.json, as Kubeflow's SDK takes it (METADATA_LOC)."""
    version = (table / "metadata" / "version-hint.text").read_text().strip()
    return str(table / "metadata" / f"v{version}.metadata.json")


def kubeflow_cache_environment(sample_table, train_job: str) -> dict:
    """What Kubeflow's SDK (``DataCacheInitializer``) and a Trainer runtime give the step."""
    return {"STORAGE_URI": "cache://analytics/events", "METADATA_LOC": metadata_file(sample_table),
            "CLUSTER_SIZE": "4", "IAM_ROLE": "arn:aws:iam::123456789012:role/events-reader",
            "WORKER_MEM": "2Gi", "TRAIN_JOB_NAME": train_job, "FLOE_COLUMNS": "id"}


def test_initialize_dataset_takes_kubeflows_cache_environment_as_the_sdk_gives_it(address, sample_table):
    """cache://<schema>/<table> loads METADATA_LOC as dataset TRAIN_JOB_NAME; CLUSTER_SIZE is
    compared with the data nodes Up, IAM_ROLE and the cache pods' sizes are said to be unused."""
    env = kubeflow_cache_environment(sample_table, "kf-events")
    result = runner.invoke(app, ["--address", address, "initialize-dataset"], env=env)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Dataset 'kf-events' READY" in text and f"{ROWS:,} rows" in text
    assert (f"IAM_ROLE arn:aws:iam::123456789012:role/events-reader is not assumed: Floe's nodes read table "
            f"{env['METADATA_LOC']} with their own credentials") in text
    assert ("The TrainJob asked for 3 data nodes (CLUSTER_SIZE 4); Floe's shared cluster serves the dataset from "
            "the 1 data nodes Up, and this step does not resize it") in text
    assert "Not used by Floe, whose nodes are a StatefulSet of their own: WORKER_MEM=2Gi" in text
    with FloeClient(address) as client:
        status = client.status("kf-events")
        assert status["state"] == "READY" and status["rows"] == ROWS
        client.drop("kf-events")
    # FLOE_DATASET names it instead of the TrainJob (TrainJobs sharing one copy).
    shared = runner.invoke(app, ["--address", address, "initialize-dataset"],
                           env=dict(env, FLOE_DATASET="kf-shared"))
    assert shared.exit_code == 0, shared.output
    with FloeClient(address) as client:
        assert client.status("kf-shared")["state"] == "READY"
        assert client.status("kf-events")["state"] == "ABSENT"
        client.drop("kf-shared")


def test_initialize_dataset_without_metadata_loc_asks_floe_catalog_for_schema_dot_table(address, sample_table):
    """No METADATA_LOC: <schema>.<table> in FLOE_CATALOG reaches the node as a catalog table (this
    node has no catalogs, so it refuses naming the catalog: exit 1)."""
    env = dict(kubeflow_cache_environment(sample_table, "kf-catalog"), METADATA_LOC="", FLOE_CATALOG="lake")
    result = runner.invoke(app, ["--address", address, "initialize-dataset"], env=env)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "analytics.events in catalog lake" in text and "'lake'" in text


@pytest.mark.parametrize("changes, message", [
    ({"STORAGE_URI": "cache://"}, "Invalid storage URI 'cache://': no schema before the table"),
    ({"STORAGE_URI": "cache://analytics"}, "no table after schema 'analytics'"),
    ({"STORAGE_URI": "cache:///events"}, "no schema before the table"),
    ({"STORAGE_URI": "cache://analytics/"}, "no table after schema 'analytics'"),
    ({"STORAGE_URI": "cache://analytics/events/2024"}, "more than one segment after the schema ('events/2024')"),
    ({"STORAGE_URI": "cache://analytics/events?v=1"}, "'?v=1' follows the table"),
    ({"METADATA_LOC": ""}, "cache://analytics/events names no table Floe can open: set METADATA_LOC"),
    ({"METADATA_LOC": "events.metadata.json"}, "Invalid METADATA_LOC 'events.metadata.json'"),
    ({"STORAGE_URI": "floe://lake.db.events"}, "METADATA_LOC is read with a cache://<schema>/<table> storage URI only"),
    ({"STORAGE_URI": ""}, "No storage URI: set STORAGE_URI"),
    ({"TRAIN_JOB_NAME": ""}, "No dataset name: set FLOE_DATASET, or TRAIN_JOB_NAME"),
    ({"CLUSTER_SIZE": "three"}, "Invalid CLUSTER_SIZE 'three'"),
    ({"CLUSTER_SIZE": "0"}, "Invalid CLUSTER_SIZE '0'"),
    ({"METADATA_LOC": "", "FLOE_CATALOG": "lake.db"}, "Invalid FLOE_CATALOG 'lake.db'"),
    ({"METADATA_LOC": "", "FLOE_CATALOG": "lake", "STORAGE_URI": "cache://db/ev.ents"}, "Table 'ev.ents'"),
])
def test_initialize_dataset_refuses_bad_kubeflow_settings_by_name_with_exit_2(sample_table, changes, message):
    env = dict(kubeflow_cache_environment(sample_table, "kf-bad"), **changes)
    # No node at this address: a bad setting must be refused before any connection.
    result = runner.invoke(app, ["--address", "grpc+tcp://127.0.0.1:9", "initialize-dataset"], env=env)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


@pytest.mark.parametrize("uri, table", [
    ("floe://lake.db.events", "lake.db.events"),
    ("s3://bucket/wh/db/events/metadata/00001-a.metadata.json", "s3://bucket/wh/db/events/metadata/00001-a.metadata.json"),
    ("/data/events", "/data/events"),
])
def test_storage_uris(uri, table):
    from floe_client.cli import table_of_storage_uri

    assert table_of_storage_uri(uri) == table


@pytest.mark.parametrize("uri, metadata, catalog, source", [
    ("cache://analytics/events", "s3a://lake/wh/analytics/events/metadata/00003-x.metadata.json", None,
     ("s3a://lake/wh/analytics/events/metadata/00003-x.metadata.json", None)),
    ("cache://analytics/events", "s3://lake/m.metadata.json", "lake", ("s3://lake/m.metadata.json", None)),
    ("cache://analytics/events", None, "lake", ("analytics.events", "lake")),
    ("cache://a.b/events", "", "lake", ("a.b.events", "lake")),
    ("floe://lake.db.events", None, "other", ("lake.db.events", None)),
])
def test_kubeflow_cache_uris(uri, metadata, catalog, source):
    from floe_client.cli import source_of_storage_uri

    assert source_of_storage_uri(uri, metadata, catalog) == source
