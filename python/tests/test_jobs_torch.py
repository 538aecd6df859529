"""FloeIterableDataset and FloeDataLoader over training jobs, with real DataLoaders and real rank
processes; skipped only where torch cannot be imported."""

from __future__ import annotations

import collections
import json

import pyarrow as pa
import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from floe_client import AlreadyExists, DatasetNotFound, FloeClient, JobSpec  # noqa: E402
from floe_client.torch import FloeDataLoader, FloeIterableDataset, arrow_to_tensor  # noqa: E402
from conftest import JOB_ROWS  # noqa: E402
from ranks import run_ranks  # noqa: E402

ORDER = dict(block_rows=1000, window_blocks=4)


def flat(batches):
    return [i for batch in batches for i in batch]


def global_batches(client, spec, epoch, world_size, batches):
    """{k: sorted ids of global batch k} for ``batches``, read rank by rank at ``world_size``."""
    gathered = collections.defaultdict(list)
    for rank in range(world_size):
        for k in batches:
            for _, batch in client.read_job(spec, epoch, world_size, rank, batch_from=k, batch_to=k + 1):
                gathered[k].extend(batch.column(0).to_pylist())
    return {k: sorted(v) for k, v in gathered.items()}


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "worker-processes"])
def test_two_ranks_with_two_workers_read_every_row_once_per_epoch(address, job_data, tmp_path, processes):
    """Two rank processes (RANK=0/1, WORLD_SIZE=2), each a FloeDataLoader with num_workers=2
    (threads in the rank's process, or 2 spawned worker processes), 2 epochs of a shuffled job:
    per epoch the union of both ranks' ids is every row once; each rank's batch n is its half of
    global batch n; the two epochs are in different orders."""
    job = dict(job=f"ranks-{processes}", batch_rows=480, seed=21, columns=["id", "user_id", "score"], **ORDER)
    config = dict(address=address, dataset=job_data, job=job, epochs=[0, 1], num_workers=2, worker_processes=processes)
    results = run_ranks([config, config], tmp_path, f"ranks-{processes}")
    assert [(r["rank"], r["world_size"]) for r in results] == [(0, 2), (1, 2)]
    batches = JOB_ROWS // 480
    spec = JobSpec(f"ranks-{processes}", job_data, 480, seed=21, columns=("id", "user_id", "score"), **ORDER)
    with FloeClient(address) as client:
        for epoch in range(2):
            per_rank = [r["epochs"][epoch] for r in results]
            for rank, seen in enumerate(per_rank):
                assert len(seen["batches"]) == batches and all(len(b) == 240 for b in seen["batches"])
                # Worker processes read alternate global batches; threads read in this process.
                assert seen["workers"] == [n % 2 if processes else -1 for n in range(batches)]
                assert seen["state"] == {
                    "version": 1, "job": f"ranks-{processes}", "dataset": job_data, "layout": seen["state"]["layout"],
                    "seed": 21, "batch_rows": 480, "epoch": epoch, "batches_consumed": batches, "world_size": 2,
                }
            ids = flat(per_rank[0]["batches"]) + flat(per_rank[1]["batches"])
            assert collections.Counter(ids) == collections.Counter(range(JOB_ROWS))
            # Batch n of every rank is global batch n.
            some = [0, 1, 57, batches - 1]
            expected = global_batches(client, spec, epoch, 1, some)
            for n in some:
                assert sorted(per_rank[0]["batches"][n] + per_rank[1]["batches"][n]) == expected[n]
        orders = [flat(results[0]["epochs"][e]["batches"]) for e in range(2)]
        assert orders[0] != orders[1]


def test_resume_mid_epoch_at_another_world_size(address, job_data, tmp_path):
    """Two ranks (2 workers each) consume 37 batches and save the loader's state; three ranks
    (1 worker each) load it and finish the epoch: every row exactly once, and global batch k holds
    the same rows at either world size."""
    job = dict(job="resize", batch_rows=480, seed=33, columns=["id", "user_id", "score"], **ORDER)
    consumed = 37
    before = run_ranks(
        [dict(address=address, dataset=job_data, job=job, epochs=[1], num_workers=2, stop_after=consumed)] * 2,
        tmp_path, "resize-w2",
    )
    states = [r["epochs"][0]["state"] for r in before]
    assert all(s["batches_consumed"] == consumed and s["epoch"] == 1 and s["world_size"] == 2 for s in states)
    assert all(len(r["epochs"][0]["batches"]) == consumed for r in before)
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(states[0]))
    after = run_ranks(
        [dict(address=address, dataset=job_data, job=job, epochs=[1], num_workers=1, state_in=str(state_file))] * 3,
        tmp_path, "resize-w3",
    )
    batches = JOB_ROWS // 480
    for result in after:
        (epoch,) = result["epochs"]
        assert epoch["start"] == consumed
        assert len(epoch["batches"]) == batches - consumed and all(len(b) == 160 for b in epoch["batches"])
        assert epoch["state"]["batches_consumed"] == batches and epoch["state"]["world_size"] == 3
    ids = flat(before[0]["epochs"][0]["batches"]) + flat(before[1]["epochs"][0]["batches"])
    for result in after:
        ids += flat(result["epochs"][0]["batches"])
    assert collections.Counter(ids) == collections.Counter(range(JOB_ROWS))

    spec = JobSpec("resize", job_data, 480, seed=33, columns=("id", "user_id", "score"), **ORDER)
    with FloeClient(address) as client:
        early, late = [0, 20, consumed - 1], [consumed, 70, batches - 1]
        # Batches the two ranks read, as three ranks read them, and the other way round.
        at_three = global_batches(client, spec, 1, 3, early)
        at_two = global_batches(client, spec, 1, 2, late)
    for k in early:
        assert sorted(before[0]["epochs"][0]["batches"][k] + before[1]["epochs"][0]["batches"][k]) == at_three[k]
    for k in late:
        n = k - consumed
        assert sorted(flat(r["epochs"][0]["batches"][n] for r in after)) == at_two[k]


def test_dynamic_mode_survives_a_rank_that_dies_holding_a_lease(address, job_data, tmp_path):
    """A rank takes two batches and dies before acknowledging the second (os._exit); a surviving
    rank with two workers finishes the epoch, the dead rank's lease handed out again after it
    timed out: the acknowledged batches hold every row exactly once."""
    job = dict(job="dynamic", batch_rows=960, seed=5, mode="dynamic", lease_timeout_ms=1000,
               columns=["id", "user_id", "score"], **ORDER)
    base = dict(address=address, dataset=job_data, job=job, epochs=[0])
    (victim,) = run_ranks([dict(base, num_workers=0, exit_after=2)], tmp_path, "victim")
    held = victim["epochs"][0]["leases"]
    assert len(held) == 2
    # Its first batch was acknowledged when it asked for the second; the second never was.
    assert victim["answers"] == [[held[0], "acknowledged"]]
    (survivor,) = run_ranks([dict(base, num_workers=2)], tmp_path, "survivor")
    epoch = survivor["epochs"][0]
    assert len(survivor["answers"]) == len(epoch["batches"])

    acknowledged = {held[0]: victim["epochs"][0]["batches"][0]}
    for (batch, answer), lease, ids in zip(survivor["answers"], epoch["leases"], epoch["batches"]):
        assert batch == lease
        if answer == "acknowledged":
            assert batch not in acknowledged
            acknowledged[batch] = ids
    batches = JOB_ROWS // 960
    assert sorted(acknowledged) == list(range(batches))
    assert held[1] in epoch["leases"]  # the dead rank's batch went to a survivor
    assert collections.Counter(flat(acknowledged.values())) == collections.Counter(range(JOB_ROWS))
    with FloeClient(address) as client:
        status = client.job_status("dynamic")
    assert status["counters"]["rows_reissued"] > 0
    assert status["counters"]["rows_acknowledged"] == JOB_ROWS
    assert status["counters"]["leases_active"] == 0
    assert status["epochs"] == [
        {"epoch": 0, "batches": batches, "pending": 0, "leased": 0, "acknowledged": batches}
    ]


def test_pad_tail_repeats_the_epochs_first_rows(address, job_data):
    """Two ranks in one process (rank= and world_size= given), no workers: with tail 'pad' the
    epoch has ceil(rows / batch_rows) full batches, every row at least once, and the extra rows
    are the epoch's first ones."""
    settings = dict(seed=6, tail="pad", columns=["id"], **ORDER)
    batches = -(-JOB_ROWS // 1100)
    ids = []
    for rank in range(2):
        data = FloeIterableDataset(address, job_data, "pad-torch", 1100, rank=rank, world_size=2, **settings)
        assert len(data) == batches
        items = list(DataLoader(data, batch_size=None, num_workers=0))
        assert len(items) == batches and all(item["id"].shape == (550,) for item in items)
        ids.extend(i for item in items for i in item["id"].tolist())
    counts = collections.Counter(ids)
    assert len(ids) == batches * 1100
    assert set(counts) == set(range(JOB_ROWS))
    repeated = sorted(i for i, n in counts.items() if n > 1)
    assert len(repeated) == batches * 1100 - JOB_ROWS and max(counts.values()) == 2
    # Positions 0..399 of the epoch are the first 400 rows of global batch 0: with 11 ranks of
    # 100 rows each, ranks 0..3 of batch 0.
    spec = JobSpec("pad-torch", job_data, 1100, **settings)
    with FloeClient(address) as client:
        first = [
            i
            for rank in range(4)
            for _, batch in client.read_job(spec, 0, 11, rank, batch_to=1)
            for i in batch.column(0).to_pylist()
        ]
    assert sorted(first) == repeated


def test_state_without_workers_is_exact_and_belongs_to_its_job(address, job_data, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    settings = dict(seed=9, columns=["id"], **ORDER)
    data = FloeIterableDataset(address, job_data, "exact", 960, **settings)
    data.set_epoch(3)
    whole = [item["id"].tolist() for item in data]
    assert len(whole) == JOB_ROWS // 960
    first = []
    for item in data:
        first.append(item["id"].tolist())
        if len(first) == 7:
            break
    state = data.state_dict()
    assert state["epoch"] == 3 and state["batches_consumed"] == 7 and state["world_size"] == 1
    assert set(state) == {"version", "job", "dataset", "layout", "seed", "batch_rows", "epoch",
                          "batches_consumed", "world_size"}

    resumed = FloeIterableDataset(address, job_data, "exact", 960, **settings)
    loader = FloeDataLoader(resumed)
    loader.load_state_dict(state)
    assert resumed.epoch == 3 and len(resumed) == len(whole) - 7
    rest = [item["id"].tolist() for item in loader]
    assert first + rest == whole
    assert loader.state_dict()["batches_consumed"] == len(whole)
    resumed.set_epoch(4)  # the next epoch starts at its first batch
    assert loader.state_dict()["batches_consumed"] == 0 and len(resumed) == len(whole)
    assert sum(1 for _ in loader) == len(whole)

    with pytest.raises(ValueError, match="seed 9, this dataset's 10"):
        FloeIterableDataset(address, job_data, "exact-other-seed", 960, **dict(settings, seed=10)).load_state_dict(
            dict(state, job="exact-other-seed")
        )
    with pytest.raises(ValueError, match="job 'exact', this dataset's 'exact-b'"):
        FloeIterableDataset(address, job_data, "exact-b", 960, **settings).load_state_dict(state)
    with pytest.raises(ValueError, match="layout"):
        data.load_state_dict(dict(state, layout="0000000000000000"))
    with pytest.raises(ValueError, match="batches_consumed"):
        data.load_state_dict(dict(state, batches_consumed=10_000))


def test_a_plain_dataloader_with_workers_asks_for_the_count(address, job_data, monkeypatch):
    """Workers read ahead of the loop, so the dataset cannot know what the loop consumed: its
    state_dict() says so instead of answering a wrong count; given the count it answers."""
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    data = FloeIterableDataset(address, job_data, "plain-workers", 4800, columns=["id"])
    loader = DataLoader(data, batch_size=None, num_workers=1, multiprocessing_context="spawn")
    assert sorted(i for item in loader for i in item["id"].tolist()) == list(range(JOB_ROWS))
    with pytest.raises(ValueError, match="FloeDataLoader"):
        data.state_dict()
    assert data.state_dict(batches_consumed=4)["batches_consumed"] == 4


def test_dynamic_without_workers_acknowledges_as_it_goes(address, job_data, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    data = FloeIterableDataset(address, job_data, "dynamic-plain", 4800, mode="dynamic", columns=["id"])
    ids = [i for item in DataLoader(data, batch_size=None) for i in item["id"].tolist()]
    assert sorted(ids) == list(range(JOB_ROWS))
    with FloeClient(address) as client:
        assert client.job_status("dynamic-plain")["counters"]["rows_acknowledged"] == JOB_ROWS
    assert data.state_dict() == {"version": 1, "mode": "dynamic", "job": "dynamic-plain", "dataset": job_data,
                                 "layout": data.layout, "epoch": 0}
    with pytest.raises(TypeError):
        len(data)


def test_registration_errors(address, job_data, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "7")
    with pytest.raises(ValueError, match="World size 7 does not divide batch_rows 480"):
        FloeIterableDataset(address, job_data, "bad-world", 480)
    monkeypatch.setenv("WORLD_SIZE", "3")
    data = FloeIterableDataset(address, job_data, "env-world", 480, columns=["id"])
    assert data._rank_world() == (0, 3)
    assert len(next(iter(data))["id"]) == 160
    # Registration waits for the first need; register() asks at once.
    missing = FloeIterableDataset(address, "no-such-dataset", "bad-dataset", 480)
    with pytest.raises(DatasetNotFound):
        missing.register()
    with pytest.raises(DatasetNotFound):
        next(iter(missing))
    with pytest.raises(AlreadyExists):
        FloeIterableDataset(address, job_data, "env-world", 480, columns=["id"], seed=1).register()


def test_a_dataset_is_built_and_pickled_without_the_cluster(monkeypatch):
    """Nothing is asked of the cluster until the data is needed: a notebook or a config object
    can build the dataset where no node is reachable, and the first read names the failure."""
    import pickle

    from floe_client import Unavailable

    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    data = FloeIterableDataset("grpc://127.0.0.1:9", "events", "offline", 480,
                               client_options=dict(patience=0.5, timeout=2))
    copy = pickle.loads(pickle.dumps(data))
    assert copy.job == "offline" and copy.epoch == 0
    with pytest.raises(Unavailable):
        next(iter(copy))


def test_persistent_workers_read_the_epoch_the_loop_sets(address, job_data, monkeypatch):
    """With worker processes, persistent_workers=True keeps two workers (and their copies of the dataset) from epoch to
    epoch: each epoch still reads every row once, in that epoch's order (the order a fresh
    loader reads), and a resumed epoch starts where its state says."""
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    settings = dict(seed=4, columns=["id"], **ORDER)

    def epoch_ids(loader):
        return [item["id"].tolist() for item in loader]

    fresh = FloeIterableDataset(address, job_data, "persistent", 2400, **settings)
    expected = []
    for epoch in range(3):
        fresh.set_epoch(epoch)
        expected.append(epoch_ids(FloeDataLoader(fresh, num_workers=2)))
    assert expected[0] != expected[1]

    data = FloeIterableDataset(address, job_data, "persistent", 2400, **settings)
    loader = FloeDataLoader(
        data, num_workers=2, worker_processes=True, persistent_workers=True, multiprocessing_context="spawn"
    )
    for epoch in range(2):
        data.set_epoch(epoch)
        seen = epoch_ids(loader)
        assert seen == expected[epoch]
        assert sorted(flat(seen)) == list(range(JOB_ROWS))
    workers = loader._iterator._workers
    data.set_epoch(2)
    taken = []
    for item in loader:
        taken.append(item["id"].tolist())
        if len(taken) == 5:
            break
    state = loader.state_dict()
    assert state["epoch"] == 2 and state["batches_consumed"] == 5
    loader.load_state_dict(state)
    assert taken + epoch_ids(loader) == expected[2]
    assert loader._iterator._workers == workers  # the same worker processes all along


def test_default_to_tensors_keeps_numeric_columns(address, job_data, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    data = FloeIterableDataset(address, job_data, "tensors", 1000)
    first = next(iter(data))
    # Strings have no tensor form: they stay Arrow (floe_client.tensors; column_transforms maps them).
    assert isinstance(first.pop("lang"), pa.StringArray) and isinstance(first.pop("text"), pa.StringArray)
    assert set(first) == {"id", "user_id", "rating", "score", "event_time"}
    assert first["id"].dtype == torch.int64
    assert first["user_id"].dtype == torch.int32
    assert first["rating"].dtype == torch.float32
    assert first["score"].dtype == torch.float64
    assert first["event_time"].dtype == torch.int64  # microseconds since the epoch
    assert {t.shape[0] for t in first.values()} == {1000}
    # 2024 in microseconds since the epoch
    assert 1_704_067_200_000_000 <= int(first["event_time"].min()) < 1_735_689_600_000_000


def test_arrow_to_tensor_is_zero_copy_without_nulls():
    column = pa.array(range(1000), pa.int64())
    tensor = arrow_to_tensor(column)
    assert tensor.data_ptr() == column.buffers()[1].address
    with_nulls = arrow_to_tensor(pa.array([1, None, 3], pa.int32()))
    assert with_nulls.dtype == torch.float64 and bool(torch.isnan(with_nulls[1]))
    assert arrow_to_tensor(pa.array([True, False])).tolist() == [True, False]
    assert arrow_to_tensor(pa.array([1, 2], pa.uint32())).dtype == torch.int64


def test_dynamic_workers_do_not_wait_for_each_others_leases(address, job_data, tmp_path):
    """One rank, two workers, one slower than the other, and a lease timeout far longer than the
    test may take: near the end of the epoch the slow worker finds every batch leased (to the fast
    one, whose batches wait in the DataLoader's queue behind the slow worker's turn, so they are
    not acknowledged). It must let the loop go on to those batches rather than block it until
    the leases time out: nothing is handed out twice."""
    job = dict(job="dynamic-long", batch_rows=2400, seed=2, mode="dynamic", lease_timeout_ms=3_600_000,
               columns=["id", "user_id", "score"])
    config = dict(
        address=address, dataset=job_data, job=job, epochs=[0, 1], num_workers=2, worker_processes=True, slow_worker=1
    )
    (result,) = run_ranks([config], tmp_path, "long-leases", timeout=150)
    for epoch in result["epochs"]:
        assert sorted(epoch["leases"]) == list(range(JOB_ROWS // 2400))
        assert collections.Counter(flat(epoch["batches"])) == collections.Counter(range(JOB_ROWS))
    assert [answer for _, answer in result["answers"]] == ["acknowledged"] * (2 * JOB_ROWS // 2400)
    with FloeClient(address) as client:
        counters = client.job_status("dynamic-long")["counters"]
    assert counters["rows_reissued"] == 0 and counters["rows_acknowledged"] == 2 * JOB_ROWS


def test_the_loader_reads_in_this_process_ahead_of_the_loop_and_counts_what_the_loop_took(address, job_data, monkeypatch):
    """FloeDataLoader's default: no worker process; its threads read and convert ahead of the loop
    in the loop's order (the order worker processes give), and the state counts what the loop
    took, not what was read ahead, so a resume from a loop that broke off repeats nothing."""
    import multiprocessing

    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    settings = dict(seed=9, columns=["id"], **ORDER)
    reference = FloeIterableDataset(address, job_data, "threads-ref", 2400, **settings)
    expected = [item["id"].tolist() for item in FloeDataLoader(reference, num_workers=2, worker_processes=True)]

    data = FloeIterableDataset(address, job_data, "threads", 2400, **settings)
    loader = FloeDataLoader(data, num_workers=2, persistent_workers=True, multiprocessing_context="spawn")
    taken = []
    for item in loader:
        assert multiprocessing.active_children() == []
        taken.append(item["id"].tolist())
        if len(taken) == 3:
            break
    state = loader.state_dict()
    assert state["batches_consumed"] == 3
    with pytest.raises(ValueError, match="read ahead of the training loop"):
        data.state_dict()  # the dataset's own count includes what the threads read ahead
    resumed = FloeDataLoader(FloeIterableDataset(address, job_data, "threads", 2400, **settings), num_workers=0)
    resumed.load_state_dict(state)
    rest = [item["id"].tolist() for item in resumed]
    assert taken + rest == expected
    assert sorted(flat(taken + rest)) == list(range(JOB_ROWS))


def test_the_loader_refuses_what_only_worker_processes_can_do(job_data):
    data = FloeIterableDataset("grpc+tcp://127.0.0.1:1", job_data, "refused", 2400)
    with pytest.raises(ValueError, match="worker_init_fn"):
        FloeDataLoader(data, num_workers=2, worker_init_fn=print)
    with pytest.raises(ValueError, match="num_workers"):
        FloeDataLoader(data, num_workers=-1)
