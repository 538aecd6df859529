"""examples/train.py as its README runs it: torchrun with two ranks for an epoch against a real
node, then a restart at three ranks that resumes from the checkpoint at the next epoch."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import JOB_ROWS  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train.py"


def torchrun(ranks: int, env: dict, cwd: Path) -> str:
    log = cwd / f"torchrun-{ranks}.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            # torch 1.13 (Debian's) on Python 3.11 turns the default "--redirects 0" (and any 0) into
            # None and fails (3, both streams, too); rank 0's stdout teed to the console (1) parses,
            # and the other ranks keep the default.
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--redirects", "0:1", "--tee", "0:1",
             "--nproc_per_node", str(ranks), str(EXAMPLE)],
            env={**os.environ, "OMP_NUM_THREADS": "1", **env}, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"torchrun with {ranks} ranks did not finish in 300 s:\n{log.read_text()[-4000:]}")
    output = log.read_text()
    assert code == 0, output[-4000:]
    return output


def test_train_reads_every_row_and_resumes_at_another_world_size(address, job_data, tmp_path):
    env = {"FLOE_ADDRESS": address, "FLOE_DATASET": job_data, "FLOE_JOB": "example-train", "FEATURES": "user_id,rating",
           "LABEL": "score", "BATCH_ROWS": "4800", "NUM_WORKERS": "1", "CHECKPOINT_DIR": str(tmp_path / "ckpt")}
    first = torchrun(2, dict(env, EPOCHS="1"), tmp_path)
    assert re.search(rf"epoch 0: {JOB_ROWS} rows in 10 global batches over 2 ranks, mean loss [0-9.]+(e-?[0-9]+)?\n", first), first
    assert (tmp_path / "ckpt" / "checkpoint.pt").exists()
    resumed = torchrun(3, dict(env, EPOCHS="2"), tmp_path)
    assert "resuming epoch 1 at batch 0" in resumed, resumed
    assert f"epoch 1: {JOB_ROWS} rows in 10 global batches over 3 ranks" in resumed, resumed
    assert "epoch 0:" not in resumed
