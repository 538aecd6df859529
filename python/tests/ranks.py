"""Rank processes of a training job for the torch tests: one ``torch_rank.py`` process per rank,
with RANK and WORLD_SIZE in its environment, each in its own process group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

HERE = Path(__file__).resolve().parent


def start_ranks(configs, tmp_path, name) -> List[subprocess.Popen]:
    """Starts one torch_rank.py process per config (RANK = its index, WORLD_SIZE = their
    number); each writes its result to ``config["out"]``, set here."""
    pythonpath = os.pathsep.join([str(HERE.parent), str(HERE), os.environ.get("PYTHONPATH", "")])
    processes = []
    for rank, config in enumerate(configs):
        config = dict(config, out=str(tmp_path / f"{name}-rank{rank}.json"))
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(len(configs)), PYTHONPATH=pythonpath)
        process = subprocess.Popen(
            [sys.executable, str(HERE / "torch_rank.py"), json.dumps(config)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            # Its own process group, so a timeout also takes down its DataLoader workers.
            start_new_session=True,
        )
        process.out = Path(config["out"])
        processes.append(process)
    return processes


def finish_ranks(processes, timeout=300):
    """Waits for the rank processes; answers their results. A rank that fails or outlasts
    ``timeout`` fails the test (and every rank is killed)."""
    for process in processes:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in processes:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            pytest.fail(f"A rank process did not finish within {timeout} s")
        assert process.returncode == 0, output.decode(errors="replace")
    return [json.loads(p.out.read_text()) for p in processes]


def run_ranks(configs, tmp_path, name, timeout=300):
    """Runs the ranks at once and answers their results."""
    return finish_ranks(start_ranks(configs, tmp_path, name), timeout)
