"""FloeIterableDataset under torchdata's StatefulDataLoader, against a real node: part of an epoch
read at one world size, the loader's state_dict() saved as a checkpoint would save it (JSON), and
the rest of the epoch read by new loaders at another world size, with and without worker
processes: every row of the epoch exactly once, and each global batch where it belongs."""

from __future__ import annotations

import collections
import json

import pytest

torch = pytest.importorskip("torch")
stateful = pytest.importorskip("torchdata.stateful_dataloader")

from floe_client import FloeClient, JobSpec  # noqa: E402
from floe_client.torch import FloeIterableDataset  # noqa: E402
from conftest import JOB_ROWS  # noqa: E402

BATCH_ROWS = 480  # divides among 2 and 3 ranks
BATCHES = JOB_ROWS // BATCH_ROWS
SETTINGS = dict(seed=13, columns=["id"], block_rows=1000, window_blocks=4)
EPOCH = 2


def loader(address, dataset, job, rank, world, workers, state=None, epoch=EPOCH):
    data = FloeIterableDataset(address, dataset, job, BATCH_ROWS, rank=rank, world_size=world, **SETTINGS)
    data.set_epoch(epoch)
    # Spawned workers: this process has used gRPC, and a forked child of it can hang.
    options = dict(num_workers=workers, multiprocessing_context="spawn") if workers else {}
    made = stateful.StatefulDataLoader(data, batch_size=None, **options)
    if state is not None:
        made.load_state_dict(state)
    return made


def ids(item):
    return sorted(item["id"].tolist())


def epoch_order(address, dataset, job, epoch=EPOCH):
    """Global batch k of the epoch (its sorted ids) for every k, read by one reader."""
    spec = JobSpec(job, dataset, BATCH_ROWS, **dict(SETTINGS, columns=("id",)))
    with FloeClient(address) as client:
        return [sorted(batch.column(0).to_pylist()) for _, batch in client.read_job(spec, epoch, 1, 0)]


@pytest.mark.parametrize("workers", [0, 2], ids=["in-loop-process", "2-worker-processes"])
def test_resume_mid_epoch_at_another_world_size(address, job_data, workers):
    """Two ranks take 21 batches each (with 2 workers the round-robin stands mid-turn: worker 0
    gave 11, worker 1 gave 10); rank 0's loader state goes to three new ranks, which read the
    rest. StatefulDataLoader keeps one dataset state per worker, taken as the loop takes each
    item, so a worker's state names the global batch it reads next."""
    job = f"stateful-{workers}"
    taken = 21
    before = []
    for rank in range(2):
        first = loader(address, job_data, job, rank, 2, workers)
        iterator = iter(first)
        before.append([ids(next(iterator)) for _ in range(taken)])
        if rank == 0:
            state = json.loads(json.dumps(first.state_dict()))  # a checkpoint holds plain data
        del iterator, first  # stops its workers
    if workers:
        snapshots = state["_snapshot"]["_worker_snapshots"]
        assert [snapshots[f"worker_{j}"]["dataset_state"]["next_batch"] for j in range(2)] == [22, 21]
    else:
        assert state["dataset_state"]["batches_consumed"] == taken

    after = [[ids(item) for item in loader(address, job_data, job, rank, 3, workers, state)] for rank in range(3)]
    assert all(len(rest) == BATCHES - taken for rest in after)
    seen = [i for rank in before + after for batch in rank for i in batch]
    assert collections.Counter(seen) == collections.Counter(range(JOB_ROWS))
    expected = epoch_order(address, job_data, job)
    for n in range(taken):
        assert sorted(before[0][n] + before[1][n]) == expected[n]
    for n in range(BATCHES - taken):
        assert sorted(after[0][n] + after[1][n] + after[2][n]) == expected[taken + n]


@pytest.mark.parametrize("workers", [0, 2], ids=["in-loop-process", "2-worker-processes"])
def test_a_state_saved_after_the_epoch_goes_on_with_the_next(address, job_data, workers):
    """A checkpoint taken when the epoch ended: the loop sets the next epoch and reads all of it
    (StatefulDataLoader applies the state when that iteration starts, after set_epoch)."""
    job = f"stateful-end-{workers}"
    first = loader(address, job_data, job, 0, 1, workers)
    assert len(list(first)) == BATCHES
    state = json.loads(json.dumps(first.state_dict()))
    del first
    resumed = loader(address, job_data, job, 0, 1, workers, state, epoch=EPOCH + 1)
    assert [ids(item) for item in resumed] == epoch_order(address, job_data, job, EPOCH + 1)


def test_a_workers_state_belongs_to_that_worker(address, job_data):
    job = "stateful-misplaced"
    first = loader(address, job_data, job, 0, 1, 2)
    iterator = iter(first)
    next(iterator)
    worker_state = first.state_dict()["_snapshot"]["_worker_snapshots"]["worker_1"]["dataset_state"]
    del iterator, first
    assert worker_state["worker"] == 1 and worker_state["workers"] == 2 and worker_state["next_batch"] == 1
    data = FloeIterableDataset(address, job_data, job, BATCH_ROWS, rank=0, world_size=1, **SETTINGS)
    with pytest.raises(ValueError, match="DataLoader worker 1's of 2"):
        data.load_state_dict(worker_state)


def test_a_trainer_sets_the_epoch_on_the_loader_and_resumes_from_its_state(address, job_data):
    """As Hugging Face's Trainer drives a loader it is given: set_epoch on the loader each epoch;
    a restart loads the saved loader state, then sets the epoch it counted as unfinished."""
    from floe_client.torch import FloeDataLoader

    job = "trainer-wiring"
    data = FloeIterableDataset(address, job_data, job, BATCH_ROWS, rank=0, world_size=1, **SETTINGS)
    first = FloeDataLoader(data, num_workers=2)
    first.set_epoch(EPOCH)
    taken = []
    for item in first:
        taken.append(ids(item))
        if len(taken) == 30:
            break
    state = json.loads(json.dumps(first.state_dict()))
    resumed_data = FloeIterableDataset(address, job_data, job, BATCH_ROWS, rank=0, world_size=1, **SETTINGS)
    resumed = FloeDataLoader(resumed_data, num_workers=2)
    resumed.load_state_dict(state)
    resumed.set_epoch(EPOCH)
    assert taken + [ids(item) for item in resumed] == epoch_order(address, job_data, job)
    resumed.set_epoch(EPOCH + 1)
    assert [ids(item) for item in resumed] == epoch_order(address, job_data, job, EPOCH + 1)
