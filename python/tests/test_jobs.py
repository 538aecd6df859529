"""Training jobs through FloeClient (no torch): registration, the epoch order and its global
batches at any world size, tails, dynamic leases, jobs side by side, errors, and recovery from
failed streams and lost jobs."""

from __future__ import annotations

import collections
import dataclasses
import threading
import time

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from floe_client import (
    AlreadyExists,
    DatasetNotFound,
    FailedPrecondition,
    FloeClient,
    InvalidRequest,
    JobNotFound,
    JobSpec,
    NotFound,
    Unavailable,
)
from floe_client.errors import translate
from floe_client.jobs import _job_parts, batches_per_message, chunk_size, epoch_chunks, job_descriptor
from conftest import JOB_ROWS

# Blocks smaller than a slice, shuffled in small windows: a global batch gathers rows of several
# slices, so batches are assembled from several endpoint streams.
ORDER = dict(block_rows=1000, window_blocks=4)


def ids(batch: pa.RecordBatch):
    return batch.column(batch.schema.get_field_index("id")).to_pylist()


def read_ids(client, spec, epoch, world_size=1, rank=0, **kwargs):
    """{k: ids of batch k} for one rank, checking the progression comes in order, each once."""
    got = collections.OrderedDict()
    for k, batch in client.read_job(spec, epoch, world_size, rank, **kwargs):
        assert k not in got
        assert batch.num_rows == spec.batch_rows // world_size
        got[k] = ids(batch)
    assert list(got) == sorted(got)
    return got


def order(client, spec, epoch):
    return [i for batch in read_ids(client, spec, epoch).values() for i in batch]


def test_register_is_idempotent_and_other_settings_are_refused(client, job_data):
    status = client.register_job("status-job", job_data, 480, seed=1, columns=["id", "score"], **ORDER)
    assert status["job"] == "status-job" and status["dataset"] == job_data
    assert status["mode"] == "deterministic" and status["tail"] == "drop" and status["shuffle"] is True
    assert status["columns"] == ["id", "score"]
    assert status["rows"] == JOB_ROWS
    assert status["batches_per_epoch"] == JOB_ROWS // 480
    assert isinstance(status["layout"], str) and status["layout"]
    assert status["counters"] == {"rows_leased": 0, "rows_acknowledged": 0, "rows_reissued": 0, "leases_active": 0}
    assert status["epochs"] == []
    again = client.register_job("status-job", job_data, 480, seed=1, columns=["id", "score"], **ORDER)
    assert again == status
    with pytest.raises(AlreadyExists, match="other settings"):
        client.register_job("status-job", job_data, 480, seed=2, columns=["id", "score"], **ORDER)
    assert client.job_status("status-job") == status
    dropped = client.drop_job("status-job")
    assert dropped["dropped"] is True and dropped["job"] == "status-job"
    with pytest.raises(JobNotFound, match="status-job"):
        client.job_status("status-job")


def test_an_epoch_is_every_row_once_and_global_batches_do_not_depend_on_world_size(client, job_data):
    spec = JobSpec("order", job_data, 480, seed=5, **ORDER)
    client.register_job_spec(spec)
    whole = read_ids(client, spec, 0)
    assert list(whole) == list(range(JOB_ROWS // 480))
    every = [i for batch in whole.values() for i in batch]
    assert collections.Counter(every) == collections.Counter(range(JOB_ROWS))
    for world_size in (2, 3, 4):
        gathered = collections.defaultdict(list)
        for rank in range(world_size):
            for k, batch in read_ids(client, spec, 0, world_size, rank).items():
                gathered[k].extend(batch)
        assert {k: sorted(v) for k, v in gathered.items()} == {k: sorted(v) for k, v in whole.items()}


def test_a_job_shuffled_in_runs_serves_units_of_neighbouring_rows_once_at_any_world_size(client, job_data):
    spec = JobSpec("runs", job_data, 480, seed=5, run_rows=10, **ORDER)
    status = client.register_job_spec(spec)
    assert status["run_rows"] == 10
    assert client.register_job("rows", job_data, 480, **ORDER)["run_rows"] == 1  # the default: single rows
    with pytest.raises(AlreadyExists, match="run_rows=10"):
        client.register_job_spec(dataclasses.replace(spec, run_rows=20))
    with pytest.raises(InvalidRequest, match="run_rows"):
        client.register_job("runs-too-long", job_data, 480, run_rows=1001, **ORDER)
    whole = read_ids(client, spec, 0)
    every = [i for batch in whole.values() for i in batch]
    assert collections.Counter(every) == collections.Counter(range(JOB_ROWS // 480 * 480))
    # Units of 10 rows (shorter only at a block's end) stay together; the units are shuffled.
    place = {i: p for p, i in enumerate(i for batch in client.read_shard(job_data) for i in ids(batch))}
    blocks = -(-JOB_ROWS // 1000) + 8  # at most one short block per slice
    breaks = sum(1 for a, b in zip(every, every[1:]) if place[b] != place[a] + 1)
    assert JOB_ROWS // 10 // 2 < breaks <= JOB_ROWS // 10 + blocks
    for world_size in (2, 3):
        gathered = collections.defaultdict(list)
        for rank in range(world_size):
            for k, batch in read_ids(client, spec, 0, world_size, rank).items():
                gathered[k].extend(batch)
        assert gathered == whole
    assert order(client, spec, 1) != every


def test_an_epoch_is_planned_in_chunks_growing_from_one_batch_to_the_chunk_size():
    indices = range(3, 1000, 2)  # a worker's progression: every 2nd batch from 3 on
    chunks = epoch_chunks(indices, 128)
    assert [len(c) for c in chunks] == [1, 4, 16, 64] + [128] * 3 + [len(indices) - 85 - 384]
    assert [k for c in chunks for k in c] == list(indices)
    assert [len(c) for c in epoch_chunks(range(3), 128)] == [1, 2]
    assert epoch_chunks(range(0), 128) == []
    # Large batches make shorter chunks: about 524,288 rows a chunk at most, never under a batch.
    assert chunk_size(JobSpec("c", "d", 4096), 1, 128) == 128
    assert chunk_size(JobSpec("c", "d", 65536), 1, 128) == 8
    assert chunk_size(JobSpec("c", "d", 1 << 20), 1, 128) == 1


def raw_parts(address, spec, epoch, world_size, rank, batch_to, per_message):
    """{k: (ids, places)} of one rank's batches as the node's streams send them, and the number of
    record batches they came in."""
    parts, messages = {}, 0
    with fl.FlightClient(address) as raw:
        info = raw.get_flight_info(job_descriptor(spec, epoch, world_size, rank, 0, batch_to, 1, per_message))
        for endpoint in info.endpoints:
            reader = raw.do_get(endpoint.ticket)
            while True:
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    break
                messages += 1
                for k, batch, places in _job_parts(chunk):
                    assert k not in parts
                    parts[k] = (ids(batch), None if places is None else places.to_pylist())
    return parts, messages


@pytest.mark.parametrize("shuffle", [True, False])
def test_record_batches_of_several_global_batches_cut_into_the_same_parts(address, client, job_data, shuffle):
    spec = JobSpec(f"grouped-{shuffle}", job_data, 480, seed=3, shuffle=shuffle, **ORDER)
    client.register_job_spec(spec)
    batches = JOB_ROWS // 480
    for world_size in (1, 3):
        one, singles = raw_parts(address, spec, 1, world_size, world_size - 1, batches, 1)
        eight, grouped = raw_parts(address, spec, 1, world_size, world_size - 1, batches, 8)
        assert one == eight
        assert sorted(one) == list(range(batches))
        assert singles == batches
        if shuffle or world_size == 1:
            assert grouped < singles / 2, (grouped, singles)
    # What the client reads (grouped by default) is the same too.
    assert {k: (v, None) for k, v in read_ids(client, spec, 1).items()} == raw_parts(address, spec, 1, 1, 0, batches, 1)[0]
    assert batches_per_message(160, 100) == 100
    assert batches_per_message(4096, 128) == 8 and batches_per_message(1 << 16, 128) == 1
    with fl.FlightClient(address) as raw:
        with pytest.raises(pa.ArrowException, match="batches_per_message: 1025"):
            raw.get_flight_info(job_descriptor(spec, 0, 1, 0, 0, 1, 1, 1025))


def test_a_progression_reads_every_step_th_batch(client, job_data):
    spec = JobSpec("steps", job_data, 480, seed=5, **ORDER)
    client.register_job_spec(spec)
    whole = read_ids(client, spec, 2, world_size=2, rank=1)
    # Small chunks: several plans, each prefetched while the one before is consumed.
    part = read_ids(client, spec, 2, world_size=2, rank=1, batch_from=3, batch_step=4, batch_to=90, chunk_batches=5)
    assert list(part) == list(range(3, 90, 4))
    assert part == {k: whole[k] for k in range(3, 90, 4)}
    assert read_ids(client, spec, 2, batch_from=100) == {}


def test_same_seed_and_epoch_give_the_same_order_another_epoch_or_seed_another(client, job_data):
    a = JobSpec("same-a", job_data, 960, seed=11, **ORDER)
    b = dataclasses.replace(a, job="same-b")  # another job with the same settings
    c = dataclasses.replace(a, job="same-c", seed=12)
    for spec in (a, b, c):
        client.register_job_spec(spec)
    first = order(client, a, 0)
    assert order(client, a, 0) == first
    assert order(client, b, 0) == first
    next_epoch = order(client, a, 1)
    assert next_epoch != first and sorted(next_epoch) == sorted(first)
    other_seed = order(client, c, 0)
    assert other_seed != first and sorted(other_seed) == sorted(first)


def test_without_shuffle_every_epoch_is_the_global_row_order(client, job_data):
    spec = JobSpec("no-shuffle", job_data, 1000, shuffle=False)
    client.register_job_spec(spec)
    global_order = [i for batch in client.read_shard(job_data) for i in ids(batch)]
    assert order(client, spec, 0) == global_order
    assert order(client, spec, 7) == global_order


def test_pad_fills_the_last_batch_with_the_epochs_first_rows(client, job_data):
    spec = JobSpec("pad", job_data, 1100, seed=3, tail="pad", **ORDER)
    status = client.register_job_spec(spec)
    batches = -(-JOB_ROWS // 1100)
    assert status["batches_per_epoch"] == batches
    extra = batches * 1100 - JOB_ROWS  # 400 positions past the end
    every = [i for batch in read_ids(client, spec, 0, 2, 0).values() for i in batch]
    every += [i for batch in read_ids(client, spec, 0, 2, 1).values() for i in batch]
    counts = collections.Counter(every)
    assert len(every) == batches * 1100
    assert set(counts) == set(range(JOB_ROWS))
    repeated = sorted(i for i, n in counts.items() if n == 2)
    assert len(repeated) == extra and max(counts.values()) == 2
    # With 11 ranks a rank reads 100 consecutive positions of a batch: ranks 7..10 of the last
    # batch hold positions JOB_ROWS..JOB_ROWS+399, which repeat positions 0..399, held by ranks
    # 0..3 of batch 0.
    first = [read_ids(client, spec, 0, 11, r, batch_to=1)[0] for r in range(4)]
    last = [read_ids(client, spec, 0, 11, r, batch_from=batches - 1)[batches - 1] for r in range(7, 11)]
    assert [sorted(x) for x in last] == [sorted(x) for x in first]
    assert sorted(i for part in first for i in part) == repeated


def test_two_jobs_with_other_columns_and_world_sizes_read_one_dataset_at_once(address, client, job_data):
    jobs = {
        "side-a": (JobSpec("side-a", job_data, 600, seed=1, columns=("id", "score"), **ORDER), 2),
        "side-b": (JobSpec("side-b", job_data, 960, seed=2, columns=("lang", "id")), 3),
    }
    for spec, _ in jobs.values():
        client.register_job_spec(spec)
    seen = collections.defaultdict(list)
    schemas = collections.defaultdict(set)
    errors = []

    def rank(spec, world_size, r):
        try:
            with FloeClient(address, patience=60) as own:
                for _, batch in own.read_job(spec, 0, world_size, r, chunk_batches=8):
                    schemas[spec.job].add(tuple(batch.schema.names))
                    seen[spec.job].extend(ids(batch))
        except BaseException as e:  # reported by the test thread
            errors.append(e)

    threads = [
        threading.Thread(target=rank, args=(spec, world_size, r))
        for spec, world_size in jobs.values()
        for r in range(world_size)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    for name, (spec, _) in jobs.items():
        assert schemas[name] == {spec.columns}
        assert collections.Counter(seen[name]) == collections.Counter(range(JOB_ROWS))


@pytest.mark.parametrize("run_rows", [None, 10])
def test_dynamic_leases_hand_every_batch_to_one_worker(address, client, job_data, run_rows):
    job = "leases" if run_rows is None else f"leases-runs-{run_rows}"
    spec = JobSpec(job, job_data, 1200, seed=4, mode="dynamic", run_rows=run_rows, **ORDER)
    client.register_job_spec(spec)
    acked = {}
    errors = []

    def worker(name):
        try:
            with FloeClient(address, patience=60) as own:
                for lease, batch in own.read_dynamic(spec, 0, name):
                    assert lease.worker == name and lease.epoch == 0 and batch.num_rows == 1200
                    assert lease.batch not in acked
                    acked[lease.batch] = ids(batch)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(f"test/w{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert sorted(acked) == list(range(JOB_ROWS // 1200))
    assert collections.Counter(i for b in acked.values() for i in b) == collections.Counter(range(JOB_ROWS))
    status = client.job_status(job)
    assert status["counters"]["rows_acknowledged"] == JOB_ROWS
    assert status["counters"]["leases_active"] == 0
    (epoch,) = status["epochs"]
    assert epoch["epoch"] == 0 and epoch["batches"] == epoch["acknowledged"] == JOB_ROWS // 1200
    assert client.lease(job, 0, "late") == {"status": "done"}
    # A dynamic epoch reads like a deterministic one with world size 1.
    assert read_ids(client, spec, 0, batch_from=5, batch_to=6)[5] == acked[5]


def test_acks_answer_expired_duplicate_and_unknown(client, job_data):
    client.register_job("acks", job_data, JOB_ROWS // 4, mode="dynamic", lease_timeout_ms=100)
    first = client.lease("acks", 0, "a")
    assert first["status"] == "leased" and first["rows"] == JOB_ROWS // 4
    second = client.lease("acks", 0, "b")
    assert client.ack("acks", 0, second["lease"], "b") == {"status": "acknowledged"}
    # The same ack sent again (its answer lost) is answered the same, and counted once.
    assert client.ack("acks", 0, second["lease"], "b") == {"status": "acknowledged"}
    assert client.job_status("acks")["counters"]["rows_acknowledged"] == JOB_ROWS // 4
    with pytest.raises(NotFound, match="no lease '0:99:1'"):
        client.ack("acks", 0, "0:99:1", "b")
    # The first lease times out and goes back to the queue; its late ack still counts, once.
    time.sleep(0.3)
    assert client.job_status("acks")["counters"]["rows_reissued"] == JOB_ROWS // 4
    assert client.ack("acks", 0, first["lease"], "a") == {"status": "acknowledged"}
    third = client.lease("acks", 0, "c")
    assert third["status"] == "leased" and third["batch"] not in (first["batch"], second["batch"])
    # The third times out and goes to another worker, whose ack counts: the late one is a duplicate.
    time.sleep(0.3)
    fourth = client.lease("acks", 0, "d")
    assert fourth["batch"] == third["batch"]
    assert client.ack("acks", 0, fourth["lease"], "d") == {"status": "acknowledged"}
    assert client.ack("acks", 0, third["lease"], "c") == {"status": "duplicate"}


def test_a_read_registers_a_lost_job_again_and_goes_on(client, job_data):
    spec = JobSpec("lost", job_data, 960, seed=8, **ORDER)
    client.register_job_spec(spec)
    before = read_ids(client, spec, 0, batch_to=3)
    client.drop_job("lost")  # as if its entity went down with its node
    assert read_ids(client, spec, 0, batch_to=3) == before
    assert client.job_status("lost")["seed"] == 8


def test_errors(address, client, job_data):
    with pytest.raises(DatasetNotFound, match="no-such-dataset"):
        client.register_job("err-dataset", "no-such-dataset", 10)
    with pytest.raises(InvalidRequest, match="nope"):
        client.register_job("err-column", job_data, 10, columns=["id", "nope"])
    with pytest.raises(InvalidRequest, match="batch_rows"):
        client.register_job("err-size", job_data, JOB_ROWS + 1)
    spec = JobSpec("err-world", job_data, 480)
    client.register_job_spec(spec)
    with pytest.raises(ValueError, match="World size 7 does not divide batch_rows 480"):
        client.read_job(spec, 0, world_size=7, rank=0)
    with pytest.raises(ValueError, match="Invalid rank 2"):
        client.read_job(spec, 0, world_size=2, rank=2)
    # The server refuses it too.
    with fl.FlightClient(address) as raw:
        with pytest.raises(pa.ArrowException) as refused:
            raw.get_flight_info(job_descriptor(spec, 0, 7, 0, 0, 1, 1))
    assert isinstance(translate(refused.value), InvalidRequest), refused.value
    with pytest.raises(InvalidRequest, match="deterministic"):
        client.lease("err-world", 0, "w")
    with pytest.raises(ValueError, match="Invalid mode"):
        JobSpec("x", job_data, 10, mode="random")
    with pytest.raises(ValueError, match="Invalid job id"):
        JobSpec("no spaces", job_data, 10)


def test_a_job_whose_dataset_was_loaded_again_differently_fails(client, sample_table):
    client.load("reloaded", str(sample_table), filter="id < 3000", batch_rows=1000)
    spec = JobSpec("on-reloaded", "reloaded", 500)
    client.register_job_spec(spec)
    assert len(read_ids(client, spec, 0)) == 6
    client.drop("reloaded")
    client.load("reloaded", str(sample_table), filter="id < 2000", batch_rows=1000)
    try:
        with pytest.raises(FailedPrecondition, match="changed"):
            list(client.read_job(spec, 0))
    finally:
        client.drop("reloaded")


def slice_rows(client, name):
    """Rows of each endpoint of a whole-dataset plan (one per slice), in plan order."""
    rows = []
    for endpoint in client.plan(name).endpoints:
        with fl.FlightClient(endpoint.locations[0].uri.decode()) as raw:
            rows.append(raw.do_get(endpoint.ticket).read_all().num_rows)
    return rows


def test_a_dataset_loaded_again_with_another_filter_of_equal_counts_fails_its_jobs(client, sample_table):
    """Both filters leave every slice with the same number of rows, but other rows: the job's
    positions would name other rows, so its layout must count as changed."""
    client.load("refiltered", str(sample_table), filter="id < 3000", batch_rows=1000)
    spec = JobSpec("on-refiltered", "refiltered", 500)
    client.register_job_spec(spec)
    before = slice_rows(client, "refiltered")
    assert len(read_ids(client, spec, 0)) == 6
    client.drop("refiltered")
    client.load("refiltered", str(sample_table), filter="id >= 1000 and id < 4000", batch_rows=1000)
    try:
        assert slice_rows(client, "refiltered") == before
        with pytest.raises(FailedPrecondition, match="changed"):
            list(client.read_job(spec, 0))
    finally:
        client.drop("refiltered")


def test_a_dataset_loaded_again_the_same_way_keeps_its_jobs_and_their_order(client, sample_table):
    client.load("same", str(sample_table), filter="id < 3000", batch_rows=1000)
    spec = JobSpec("on-same", "same", 500, seed=1)
    client.register_job_spec(spec)
    layout = client.job_status("on-same")["layout"]
    before = read_ids(client, spec, 0)
    client.drop("same")
    client.load("same", str(sample_table), filter="id < 3000", batch_rows=1000)
    try:
        assert read_ids(client, spec, 0) == before
        assert client.job_status("on-same")["layout"] == layout
    finally:
        client.drop("same")


# -- failures between the node and the reader -------------------------------------------------

GONE = lambda: fl.FlightUnavailableError("Flight returned unavailable error, with message: Socket closed")  # noqa: E731
BAD = lambda: pa.ArrowInvalid("Flight returned invalid argument error, with message: Invalid ticket")  # noqa: E731


class FailingReader:
    def __init__(self, reader, fail_after, error):
        self.reader, self.fail_after, self.error, self.chunks = reader, fail_after, error, 0

    def read_chunk(self):
        if self.chunks >= self.fail_after:
            self.reader.cancel()
            raise self.error()
        self.chunks += 1
        return self.reader.read_chunk()

    def cancel(self):
        self.reader.cancel()


class FailingFlight:
    """A real FlightClient whose do_get calls numbered in ``failing`` (from 0) fail after the
    given number of record batches."""

    def __init__(self, real, failing, error):
        self.real, self.failing, self.error = real, failing, error
        self.calls = 0
        self.plans = 0
        self.lock = threading.Lock()

    def get_flight_info(self, descriptor, options=None):
        with self.lock:
            self.plans += 1
        return self.real.get_flight_info(descriptor, options=options)

    def do_get(self, ticket, options=None):
        with self.lock:
            n = self.calls
            self.calls += 1
        reader = self.real.do_get(ticket, options=options)
        if n in self.failing:
            return FailingReader(reader, self.failing[n], self.error)
        return reader

    def __getattr__(self, name):
        return getattr(self.real, name)


class FailingClient(FloeClient):
    def __init__(self, address, failing, error, **options):
        super().__init__(address, **options)
        self.failing, self.error, self.wrapped = failing, error, {}

    def _flight(self, uri=None):
        real = super()._flight(uri)
        key = uri or self.address
        with self._lock:
            if key not in self.wrapped:
                self.wrapped[key] = FailingFlight(real, self.failing, self.error)
            return self.wrapped[key]


def test_failed_streams_plan_the_chunk_again_and_yield_each_batch_once(address, client, job_data):
    spec = JobSpec("flaky", job_data, 480, seed=9, **ORDER)
    client.register_job_spec(spec)
    clean = read_ids(client, spec, 0, 2, 1)
    with FailingClient(address, {1: 2, 4: 0, 5: 1, 11: 3}, GONE, patience=30) as flaky:
        got = read_ids(flaky, spec, 0, 2, 1, chunk_batches=10)
        flight = flaky.wrapped[flaky.address]
        assert flight.plans > 10  # 10 chunks, some planned more than once
    assert got == clean


def test_errors_a_new_plan_cannot_cure_reach_the_caller_and_patience_bounds_retries(address, client, job_data):
    spec = JobSpec("flaky-bad", job_data, 480, seed=9, **ORDER)
    client.register_job_spec(spec)
    got = []
    with FailingClient(address, {0: 1}, BAD, patience=30) as flaky:
        with pytest.raises(InvalidRequest, match="Invalid ticket"):
            for k, _ in flaky.read_job(spec, 0, chunk_batches=100):
                got.append(k)
        assert flaky.wrapped[flaky.address].plans == 1
    with FailingClient(address, {n: 0 for n in range(10_000)}, GONE, patience=1.0) as flaky:
        with pytest.raises(Unavailable, match="Socket closed"):
            for k, _ in flaky.read_job(spec, 0, chunk_batches=100):
                got.append(k)
    # A batch is yielded only once every endpoint delivered its part.
    assert got == []
