"""FloeIterableDataset with real DataLoaders; skipped only where torch cannot be imported."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from floe.torch import FloeIterableDataset, arrow_to_tensor  # noqa: E402
from conftest import ROWS  # noqa: E402

HERE = Path(__file__).resolve().parent


def test_two_ranks_with_two_workers_read_every_row_once_per_epoch(address, sample, tmp_path):
    """Two rank processes (RANK=0/1, WORLD_SIZE=2), each a DataLoader with 2 workers, 2 epochs:
    per epoch the union of ids over both ranks is range(ROWS), each id once."""
    outputs, processes = [], []
    pythonpath = os.pathsep.join([str(HERE.parent), str(HERE), os.environ.get("PYTHONPATH", "")])
    for rank in range(2):
        out = tmp_path / f"rank{rank}.json"
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", PYTHONPATH=pythonpath)
        processes.append(
            subprocess.Popen(
                [sys.executable, str(HERE / "torch_rank.py"), address, sample, str(out)],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                # Its own process group, so a timeout also takes down its DataLoader workers.
                start_new_session=True,
            )
        )
        outputs.append(out)
    for process in processes:
        try:
            output, _ = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for p in processes:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            pytest.fail("A rank process did not finish within 300 s")
        assert process.returncode == 0, output.decode(errors="replace")
    results = [json.loads(out.read_text()) for out in outputs]
    assert [r["rank"] for r in results] == [0, 1]
    for epoch in range(2):
        ids = []
        for rank, result in enumerate(results):
            seen = result["epochs"][epoch]
            # This rank's two workers read shards 2*rank and 2*rank+1 of 4.
            expected = {w: ROWS * (2 * rank + w + 1) // 4 - ROWS * (2 * rank + w) // 4 for w in range(2)}
            assert {int(k): v for k, v in seen["per_worker"].items()} == expected
            state = seen["state"]
            assert state["epoch"] == epoch and state["rank"] == rank and state["world_size"] == 2
            assert state["num_workers"] == 2 and state["shard_count"] == 4
            assert {int(k): v for k, v in state["rows_consumed"].items()} == {
                2 * rank + w: rows for w, rows in expected.items()
            }
            ids.extend(seen["ids"])
        assert len(ids) == ROWS
        assert collections.Counter(ids) == collections.Counter(range(ROWS))


def test_default_to_tensors_keeps_numeric_columns(address, sample):
    data = FloeIterableDataset(address, sample)
    first = next(iter(data))
    assert set(first) == {"id", "user_id", "rating", "score", "event_time"}  # no lang, no text
    assert first["id"].dtype == torch.int64
    assert first["user_id"].dtype == torch.int32
    assert first["rating"].dtype == torch.float32
    assert first["score"].dtype == torch.float64
    assert first["event_time"].dtype == torch.int64  # microseconds since the epoch
    assert len({t.shape[0] for t in first.values()}) == 1
    # 2024 in microseconds since the epoch
    assert 1_704_067_200_000_000 <= int(first["event_time"].min()) < 1_735_689_600_000_000


def test_arrow_to_tensor_is_zero_copy_without_nulls():
    import pyarrow as pa

    column = pa.array(range(1000), pa.int64())
    tensor = arrow_to_tensor(column)
    assert tensor.data_ptr() == column.buffers()[1].address
    with_nulls = arrow_to_tensor(pa.array([1, None, 3], pa.int32()))
    assert with_nulls.dtype == torch.float64 and bool(torch.isnan(with_nulls[1]))
    assert arrow_to_tensor(pa.array([True, False])).tolist() == [True, False]
    assert arrow_to_tensor(pa.array([1, 2], pa.uint32())).dtype == torch.int64


def test_single_process_reads_everything_with_exact_batches(address, sample, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    data = FloeIterableDataset(address, sample, columns=["id"], batch_size=1000)
    sizes, ids = [], []
    for item in DataLoader(data, batch_size=None, num_workers=0):
        assert set(item) == {"id"}
        sizes.append(item["id"].shape[0])
        ids.extend(item["id"].tolist())
    assert sizes == [1000] * (ROWS // 1000)
    assert sorted(ids) == list(range(ROWS))


def test_state_dict_resumes_where_consumption_stopped(address, sample):
    """num_workers=0: stop mid-epoch, save, resume in a new dataset: every row exactly once."""
    data = FloeIterableDataset(address, sample, rank=1, world_size=2)
    data.set_epoch(3)
    first = []
    for i, item in enumerate(data):
        first.extend(item["id"].tolist())
        if i == 4:
            break
    state = data.state_dict()
    assert state["epoch"] == 3 and state["shard_count"] == 2
    assert state["rows_consumed"] == {1: len(first)}

    resumed = FloeIterableDataset(address, sample, rank=1, world_size=2)
    resumed.load_state_dict(state)
    assert resumed.epoch == 3
    rest = [i for item in resumed for i in item["id"].tolist()]
    whole = [i for item in FloeIterableDataset(address, sample, rank=1, world_size=2) for i in item["id"].tolist()]
    assert first + rest == whole
    assert resumed.state_dict()["rows_consumed"] == {1: len(whole)}
    # The next epoch starts from the beginning again.
    resumed.set_epoch(4)
    assert sum(item["id"].shape[0] for item in resumed) == len(whole)

    # Other shards (another world size) cannot resume exactly yet: the epoch starts over.
    other = FloeIterableDataset(address, sample, rank=0, world_size=4)
    other.load_state_dict(state)
    with pytest.warns(UserWarning, match="starts over"):
        assert sum(item["id"].shape[0] for item in other) == ROWS // 4


def test_rank_and_world_size_from_the_environment(address, sample, monkeypatch):
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "3")
    data = FloeIterableDataset(address, sample)
    assert data.shard() == (2, 3, 0)
    assert sum(item["id"].shape[0] for item in data) == ROWS - ROWS * 2 // 3
    monkeypatch.setenv("RANK", "3")
    with pytest.raises(ValueError, match="Invalid rank 3"):
        data.shard()
