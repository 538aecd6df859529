"""The client and the ``floe`` command as ``pip install ./python`` leaves them (python/README.md,
"Install"), each in its own interpreter against a real node: the venv's ``floe`` script as a user
runs it, the command again with torch and NumPy out of reach, and a job read into pyarrow, NumPy
and torch beside whatever NumPy and torch the venv sees.

In every venv, no other distribution may install a file or a command of floe-client's: PyPI's
unrelated ``floe`` and ``floe-python`` both install a top-level package ``floe`` (issue 24), which is
why the client's is ``floe_client``.

Without ``FLOE_INSTALL_VENVS`` the venv checked is the one running these tests;
``.ci/python-install`` makes venvs the way the README says (Debian's python3 with its NumPy 1.24
and torch 1.13; current Pythons with NumPy 2; one with PyPI's ``floe`` and ``floe-python`` around
the client) and names them there, separated by ``:``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

VENVS = [Path(p) for p in os.environ.get("FLOE_INSTALL_VENVS", "").split(os.pathsep) if p] or [Path(sys.prefix)]

# Runs in the venv under test: answers what it has and what a job read gave.
READ_A_JOB = r"""
import importlib.util, json, sys
from floe_client import FloeClient, JobSpec
import pyarrow

address, dataset = sys.argv[1:3]
spec = JobSpec("install-check", dataset, 480, seed=3, columns=["id", "score"])
with FloeClient(address) as client:
    client.register_job_spec(spec)
    (k, batch), *_ = list(client.read_job(spec, 0, 1, 0, batch_to=1))
out = {"pyarrow": pyarrow.__version__, "rows": batch.num_rows, "numpy": None, "torch": None}
if importlib.util.find_spec("numpy"):
    import numpy
    out["numpy"] = numpy.__version__
    out["numpy_sum"] = int(batch.column("id").to_numpy().sum())
    out["arrow_sum"] = sum(batch.column("id").to_pylist())
if importlib.util.find_spec("torch"):
    import torch
    from floe_client.torch import FloeIterableDataset
    out["torch"] = torch.__version__
    item = next(iter(FloeIterableDataset(address, dataset, "install-check", 480, seed=3, columns=["id", "score"],
                                         rank=0, world_size=1)))
    out["tensor_ids"] = sorted(item["id"].tolist())
    out["batch_ids"] = sorted(batch.column("id").to_pylist())
print(json.dumps(out))
"""

# Runs in the venv under test: which other distributions install files floe-client installs, where
# `import floe_client` and `import floe` lead, who owns a top-level `floe`, and whose `floe` command
# the venv has.
NEIGHBOURS = r"""
import importlib.metadata as m, importlib.util, json, os

def name(d):
    return d.metadata["Name"].lower().replace("_", "-")

def files(d):
    return {os.path.realpath(str(d.locate_file(f))) for f in (d.files or ())}

ours = m.distribution("floe-client")
mine = {f for f in files(ours) if ".dist-info" not in f}
shared = {}
for d in m.distributions():
    if name(d) != "floe-client":
        common = sorted(mine & files(d))
        if common:
            shared[name(d)] = common
ours_spec = importlib.util.find_spec("floe_client")
floe = importlib.util.find_spec("floe")
owners = getattr(m, "packages_distributions", dict)().get("floe", [])
commands = sorted([name(d), ep.value] for d in m.distributions() for ep in d.entry_points
                  if ep.group == "console_scripts" and ep.name == "floe")
if ours_spec is not None:
    import floe_client
if floe is not None:
    import floe as theirs  # imports beside ours, in one process
print(json.dumps({"shared": shared, "floe_client": ours_spec and ours_spec.origin, "floe": floe and floe.origin,
                  "floe_owners": sorted(o.lower().replace("_", "-") for o in owners), "commands": commands}))
"""


def run(command, timeout=120):
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_env())
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _env():
    # The venv as a shell would have it: nothing of this test run's own interpreter leaks in.
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _blocks_numpy(venv: Path) -> str:
    """The modules the command must start without: torch always; NumPy unless this pyarrow
    requires it itself (before pyarrow 18 it did)."""
    requires = json.loads(run([str(venv / "bin" / "python"), "-c",
                               "import importlib.metadata as m, json; print(json.dumps(m.requires('pyarrow') or []))"]))
    pyarrow_needs_numpy = any(r.startswith("numpy") and "extra" not in r for r in requires)
    return "('torch',)" if pyarrow_needs_numpy else "('torch', 'numpy')"


@pytest.mark.parametrize("venv", VENVS, ids=[v.name for v in VENVS])
def test_the_installed_command_answers_the_node(venv, address, job_data):
    floe = venv / "bin" / "floe"
    assert floe.exists(), f"{venv} has no floe command: was floe-client installed there?"
    assert run([str(floe), "--version"]).startswith("floe ")
    status = json.loads(run([str(floe), "--address", address, "--json", "status", job_data]))
    assert status["state"] == "READY"


@pytest.mark.parametrize("venv", VENVS, ids=[v.name for v in VENVS])
def test_the_command_needs_neither_torch_nor_numpy(venv, address, job_data):
    blocked = _blocks_numpy(venv)
    # A module set to None in sys.modules raises ImportError when anything imports it.
    start = f"import sys; sys.modules.update(dict.fromkeys({blocked})); from floe_client.cli import run; run()"
    listed = json.loads(run([str(venv / "bin" / "python"), "-c", start, "--address", address, "--json", "list"]))
    assert job_data in [d["name"] for d in listed]


@pytest.mark.parametrize("venv", VENVS, ids=[v.name for v in VENVS])
def test_the_client_reads_a_job_beside_the_numpy_and_torch_it_finds(venv, address, job_data):
    out = json.loads(run([str(venv / "bin" / "python"), "-c", READ_A_JOB, address, job_data]).splitlines()[-1])
    print(venv.name, {k: out[k] for k in ("pyarrow", "numpy", "torch")})
    assert out["rows"] == 480
    if out["numpy"] is not None:
        assert out["numpy_sum"] == out["arrow_sum"]
    if out["torch"] is not None:
        assert out["tensor_ids"] == out["batch_ids"]  # the same global batch through floe_client.torch


@pytest.mark.parametrize("venv", VENVS, ids=[v.name for v in VENVS])
def test_no_other_distribution_installs_the_client_s_files_or_command(venv, address, job_data):
    python = str(venv / "bin" / "python")
    out = json.loads(run([python, "-c", NEIGHBOURS]).splitlines()[-1])
    print(venv.name, {k: out[k] for k in ("floe", "floe_owners", "commands")})
    assert out["shared"] == {}, f"floe-client's files are installed by other distributions too: {out['shared']}"
    assert out["floe_client"] and Path(out["floe_client"]).parent.name == "floe_client"
    # A top-level `floe`, where PyPI's floe or floe-python put one, is theirs alone.
    assert "floe-client" not in out["floe_owners"]
    # The venv's only `floe` command is the client's (neither floe nor floe-python installs one).
    assert out["commands"] == [["floe-client", "floe_client.cli:run"]]
    script = venv / "bin" / "floe"
    assert "floe_client.cli" in script.read_text()
    for command in ([str(script)], [python, "-m", "floe_client.cli"]):
        assert "initialize-dataset" in run([*command, "--help"])
        listed = json.loads(run([*command, "--address", address, "--json", "list"]))
        assert job_data in [d["name"] for d in listed]
