"""``./floe bench-training`` (python/benchmarks/training.py) runs end to end on a tiny table: every
contender feeds the loop, the ratio lines of issue 20's targets are printed and the JSON figures
are written. Its timings are judged by the benchmark itself, not here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "python" / "benchmarks" / "training.py"
ROWS = 20_000
# Four contenders keep the run short (each DataLoader epoch spawns two workers that import torch);
# they are the ones every ratio line needs.
CONTENDERS = "loader-shuffled,loader-ordered,plain-in-process,no-cache"


def test_bench_training_runs_end_to_end(classpath, tmp_path):
    out = tmp_path / "out"
    command = [
        sys.executable, str(SCRIPT), "--quick", "--rows", str(ROWS), "--rounds", "1", "--contenders", CONTENDERS,
        # The JVM as ./floe node runs it, without the launcher's build check: the build is the
        # test run's (the classpath fixture checked it is there).
        "--node", "java", "--out", str(out), "--tables", str(tmp_path / "tables"),
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    printed = result.stdout
    for line in (
        "(a) shuffled ÷ unshuffled job, both through the documented loader",
        "(a) shuffled through the loader ÷ plain read into tensors in the loop's process",
        "(b) shuffled through the loader ÷ the no-cache loader",
        "(c) node CPU per epoch",
        "(d) main node (8 slices): empty record batches",
        "(e) first epoch after the load ÷ later epochs",
        "(e) first batch of an epoch",
    ):
        assert line in printed, printed

    documents = list(out.glob("training-*.json"))
    assert len(documents) == 1, documents
    assert len(list(out.glob("training-*.png"))) == 1
    figures = json.loads(documents[0].read_text())
    assert figures["settings"]["rows"] == ROWS
    assert set(figures["contenders"]) == set(CONTENDERS.split(","))
    full_batches = ROWS // 4096 * 4096  # the jobs drop the last partial global batch
    for epoch in figures["epochs"]:
        assert epoch["rows"] > 0 and epoch["seconds"] > 0, epoch
        assert epoch["node_cpu_s"] >= 0 and epoch["reader_cpu_s"] > 0, epoch
        if epoch["contender"] in ("loader-shuffled", "loader-ordered"):
            assert epoch["rows"] == full_batches and epoch["short_items"] == 0, epoch
        if epoch["contender"] == "plain-in-process":
            assert epoch["rows"] == ROWS, epoch
        if epoch["duplicate_rows"] is not None:
            assert epoch["duplicate_rows"] == 0, epoch
    assert figures["wire"]["rows"] == full_batches
    assert {r["code"] for r in figures["ratios"]} == {"a", "b", "c", "d", "e"}
