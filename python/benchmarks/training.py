"""Floe as a training loop sees it: rows/s of 4,096-row batches of tensors into the loop, Floe's
documented loader side by side with the loader an engineer writes without a cache, in one run, as
ratios (the measuring stick of issue 20).

Run it as ``./floe bench-training [--rows N] [--rounds R] [--epochs E] [--nodes N] [--slices-sweep]
[--slices 2000] [--out DIR] [--quick]`` (defaults: 4,000,000 rows, 3 rounds of 2 epochs per
contender; about 5 minutes on 2 cores, 2 more with ``--slices-sweep``).

Method
------
1. **The table** is bench-readers' (``readers.ensure_table``: 8 Parquet files written by
   PyIceberg, ZSTD; ``id`` long, ``i`` int, ``f`` float, ``d`` double, ``s1``/``s2`` strings,
   ``ts`` timestamptz), kept under ``--tables`` (default ``data/bench-readers``, shared with it).
2. **One node**: ``./floe node`` on 127.0.0.1 as bench-readers starts it (``readers.start_node``:
   the launcher's JVM flags, ``FLOE_MEMORY_LIMIT`` 4× the Arrow bytes, at least 2 GiB), loaded
   with the table (8 slices). ``--nodes 3``: three such nodes forming one cluster, the table
   loaded once all are Up (its slices spread over them), node CPU summed over the three; they
   share the machine's cores with the readers.
3. **The contenders**, each one epoch at a time into the same loop in this process (the training
   loop's process), which receives every item and touches it (the rows of ``id``, the sum of
   ``d``); every item is ``{column: value}`` from ``floe_client.tensors.batch_to_tensors`` (numbers as
   1-d tensors, strings as Arrow arrays), all 7 columns:

   - ``loader-shuffled``: ``FloeIterableDataset(address, dataset, job=..., batch_rows=4096,
     seed=1)`` + ``FloeDataLoader(data, num_workers=2, multiprocessing_context="spawn")``, exactly
     as python/README.md shows (every other setting its default), ``data.set_epoch(e)`` before
     each epoch; one rank.
   - ``loader-ordered``: the same with ``shuffle=False``.
   - ``loader-persistent``: the shuffled one with 2 spawned worker processes kept between epochs
     (``persistent_workers=True``, and ``worker_processes=True`` where the loader has it).
   - ``job-in-process``: the same shuffled job read by ``FloeClient.read_job`` in the loop's own
     process (no DataLoader), each batch through ``batch_to_tensors``.
   - ``plain-in-process``: ``FloeClient.read_shard`` of the whole dataset in the loop's process,
     each record batch cut (zero-copy) into 4,096-row pieces through ``batch_to_tensors``.
   - ``no-cache``: what an engineer writes without a cache: a torch ``IterableDataset`` over the
     same Parquet files with pyarrow (``ParquetFile.iter_batches``), its pieces (row groups)
     shuffled per epoch and dealt to 2 spawned DataLoader workers, a 65,536-row shuffle buffer in
     each worker (filled to twice that, drawn in a random order, half emitted; every item its
     own ``take``, since a slice would be pickled with its parent's whole buffers), yielding
     4,096-row batches through the same ``batch_to_tensors``; a worker's last partial batch is
     dropped, as the jobs' ``tail="drop"`` does.
   - ``loader-floor``: a reference, not a reader: the same DataLoader (2 spawned workers) whose
     workers make every item from one stored 4,096-row batch (fresh tensors each time) and read
     nothing: what spawning workers and handing items to the loop costs by itself.

   Every shuffled job epoch is a new epoch number. After the node's load, the first epoch read is
   ``loader-shuffled``'s (the "first epoch after the load"); then every other contender reads one
   warm-up epoch, not kept; then ``--rounds`` rounds in which every contender in turn reads
   ``--epochs`` epochs.
4. **Per epoch**: rows into the loop over the wall time from ``set_epoch``/``iter`` to the end of
   the loop (worker start and shutdown included, as the loop waits for them), the time to the
   first item, the CPU seconds of the reader processes (this process: ``getrusage(RUSAGE_SELF)``;
   its children but the node: ``RUSAGE_CHILDREN`` plus ``/proc/<pid>/stat`` of the children
   alive at either end, so spawned and persistent workers both count) and of the node process
   (``/proc/<node pid>/stat`` utime+stime). Each contender's first epoch also counts how many of
   the 8 files each batch's rows come from (how well it mixes) and checks that no row came twice.
5. **Job plans on the wire** (plain ``pyarrow.flight``): one shuffled epoch read chunk by chunk
   as the client plans it (32 global batches per ``GetFlightInfo``): plan answer bytes
   (``len(FlightInfo.serialize())``), planning time, endpoints, record batches and empty record
   batches. ``--slices-sweep`` starts one more node for each of about 8 and ``--slices`` (default
   ~2,000) slices of the same rows, written again with 2,048 row groups
   (``FLOE_SLICE_TARGET_SIZE``, the node's ``floe.load.slice-target-size``), all up together, and
   measures those and the shuffled job read with ``read_job`` (no tensors) on each in turn.

Reading the output
------------------
Rows/s per contender is per round (the round's rows over its epochs' wall time), median and best
over the rounds; the ratios are of the medians, with the bests' ratio and the median of per-round
ratios beside them. CPU is the mean per epoch. Issue 20's targets follow, judged on the medians.
The figures go to ``<out>/training-<date>.json`` and a chart to ``<out>/training-<date>.png``
(``--chart`` puts it elsewhere). Every process this starts listens on 127.0.0.1 only and is
stopped by its PID when the run ends.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
# This tree's client (the venv holds an installed copy that may be older); spawned DataLoader
# workers inherit sys.path.
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.flight as fl  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
import torch.utils.data  # noqa: E402

import readers  # noqa: E402
from readers import DATASET, MB, BenchTable, ensure_table, machine_info, now, rss_bytes  # noqa: E402

BATCH_ROWS = 4_096
SEED = 1
WORKERS = 2
SHUFFLE_BUFFER_ROWS = 65_536
READ_ROWS = 65_536  # rows per pyarrow read in the no-cache loader (iter_batches' default)
CHUNK_BATCHES = 128  # global batches per job plan, as the Python client plans them (after its first)
SHUFFLED_JOB, ORDERED_JOB = "bench-training-shuffled", "bench-training-ordered"
RUNS_JOB = "bench-training-runs"
RUN_ROWS = 16  # --run-rows: the units of the runs contenders' shuffle
PLAN_SAMPLES = 15
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- CPU accounting -------------------------------------------------------------------------------


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process (all its threads, living and ended), in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "; fields[0] is the state
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _children(exclude: Sequence[int]) -> List[int]:
    me, found = os.getpid(), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == me:
            found.append(int(entry.name))
    return found


def reader_cpu(exclude: Sequence[int]) -> float:
    """CPU seconds of this process and of its children but ``exclude`` (the nodes): children
    already waited for through RUSAGE_CHILDREN, living ones through /proc (a worker alive at one
    end of an epoch and reaped before the other is counted once, by the difference)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    living = 0.0
    for pid in _children(exclude):
        with contextlib.suppress(OSError, ValueError, IndexError):
            living += _proc_cpu(pid)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + living


# -- the no-cache loader ---------------------------------------------------------------------------


class ParquetShuffleDataset(torch.utils.data.IterableDataset):
    """The loader a competent engineer writes without a cache: pyarrow over the table's Parquet
    files, its pieces (row groups) shuffled per epoch and dealt round-robin to the DataLoader's
    workers, a shuffle buffer of ``buffer_rows`` rows per worker, ``batch_rows``-row items of
    tensors (``floe_client.tensors.batch_to_tensors``, as Floe's loader makes them)."""

    def __init__(self, paths: Sequence[str], batch_rows: int = BATCH_ROWS, buffer_rows: int = SHUFFLE_BUFFER_ROWS,
                 seed: int = SEED):
        super().__init__()
        self.pieces = [(path, group) for path in paths for group in range(pq.ParquetFile(path).num_row_groups)]
        self.batch_rows = batch_rows
        self.buffer_rows = buffer_rows
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch  # read by workers spawned for the next iteration

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        from floe_client.tensors import batch_to_tensors

        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        order = np.random.default_rng([self.seed, self.epoch]).permutation(len(self.pieces))
        rng = np.random.default_rng([self.seed, self.epoch, worker])
        held: List[pa.RecordBatch] = []
        rows = 0
        for index in order[worker::workers]:
            path, group = self.pieces[index]
            for batch in pq.ParquetFile(path).iter_batches(batch_size=READ_ROWS, row_groups=[group]):
                held.append(batch)
                rows += batch.num_rows
                if rows >= 2 * self.buffer_rows:
                    out, held = self._shuffled(held, rows, self.buffer_rows, rng)
                    rows = sum(b.num_rows for b in held)
                    for item in out:
                        yield batch_to_tensors(item)
        out, _ = self._shuffled(held, rows, 0, rng)
        for item in out:
            yield batch_to_tensors(item)

    def _shuffled(self, held, rows, keep, rng):
        """Draws the held rows in a random order; answers (whole batches to emit, leaving at least
        ``keep`` rows; the rows kept). With ``keep`` 0 the last partial batch is dropped.

        Each batch is its own ``take``, so that its buffers hold its rows only: a slice of a larger
        batch would be pickled whole on its way from the worker to the loop (pyarrow pickles an
        array's entire buffers, not the slice's part: 32 times the bytes here)."""
        if not rows:
            return [], []
        table = _one_batch(held)
        order = rng.permutation(rows)
        emit = (rows - keep) // self.batch_rows * self.batch_rows
        out = [table.take(pa.array(order[start : start + self.batch_rows]))
               for start in range(0, emit, self.batch_rows)]
        kept = [table.take(pa.array(order[emit:]))] if keep else []
        return out, kept


def _one_batch(batches: List[pa.RecordBatch]) -> pa.RecordBatch:
    from floe_client.jobs import _concat  # the client's own, imported here as floe_client is elsewhere

    return _concat(batches)


# -- the contenders --------------------------------------------------------------------------------


class Contender:
    """One way of feeding the loop; ``epoch(e)`` is what ``for item in ...`` iterates."""

    key = ""
    label = ""
    job: Optional[str] = None  # the Floe job it reads, whose epoch numbers it shares
    analysable = True  # its rows are the table's, each once: how batches mix means something

    def epoch(self, epoch: int) -> Iterator[Dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class FloeLoader(Contender):
    """The documented loader: FloeIterableDataset + FloeDataLoader, 2 spawned workers."""

    def __init__(self, key: str, label: str, address: str, job: str, shuffle: bool, run_rows: Optional[int] = None,
                 **loader_options):
        from floe_client.torch import FloeDataLoader, FloeIterableDataset

        self.key, self.label, self.job = key, label, job
        settings = {} if run_rows is None else {"run_rows": run_rows}
        self.data = FloeIterableDataset(address, DATASET, job=job, batch_rows=BATCH_ROWS, seed=SEED, shuffle=shuffle,
                                        **settings)
        self.loader = FloeDataLoader(self.data, num_workers=WORKERS, multiprocessing_context="spawn", **loader_options)

    def epoch(self, epoch: int):
        self.data.set_epoch(epoch)
        return iter(self.loader)

    def close(self) -> None:
        iterator = getattr(self.loader, "_iterator", None)  # persistent workers
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            iterator._shutdown_workers()
        self.loader._iterator = None
        with contextlib.suppress(Exception):
            self.loader.close()


class JobInProcess(Contender):
    """The shuffled job read by FloeClient.read_job in the loop's process."""

    key, label, job = "job-in-process", "Floe shuffled job, read_job in the loop's process", SHUFFLED_JOB

    def __init__(self, address: str, run_rows: Optional[int] = None):
        from floe_client import FloeClient, JobSpec

        if run_rows is not None:
            self.key, self.job = "job-runs", RUNS_JOB
            self.label = f"Floe job shuffled in runs of {run_rows}, read_job in the loop's process"
        self.client = FloeClient(address)
        self.spec = JobSpec(self.job, DATASET, BATCH_ROWS, seed=SEED, shuffle=True, run_rows=run_rows)
        self.client.register_job_spec(self.spec)

    def epoch(self, epoch: int):
        from floe_client.tensors import batch_to_tensors

        for _, batch in self.client.read_job(self.spec, epoch, 1, 0):
            yield batch_to_tensors(batch)

    def close(self) -> None:
        self.client.close()


class PlainInProcess(Contender):
    """The whole dataset as a plain shard read (read_shard) in the loop's process, cut into
    4,096-row pieces (slices of the received batches, no copy)."""

    key, label = "plain-in-process", "Floe plain shard read in the loop's process"

    def __init__(self, address: str):
        from floe_client import FloeClient

        self.client = FloeClient(address)

    def epoch(self, epoch: int):
        from floe_client.tensors import batch_to_tensors

        for batch in self.client.read_shard(DATASET):
            for start in range(0, batch.num_rows, BATCH_ROWS):
                yield batch_to_tensors(batch.slice(start, BATCH_ROWS))

    def close(self) -> None:
        self.client.close()


class HandOverDataset(torch.utils.data.IterableDataset):
    """Ready items and nothing else: each worker turns one stored 4,096-row batch of the table
    into a new item (``batch_to_tensors``, fresh tensors each time) ``items`` times in all, so
    that what the loop waits for is the DataLoader's own cost: spawning the workers, moving each
    tensor into shared memory and passing it to the loop, pickling the string arrays."""

    def __init__(self, batch: pa.RecordBatch, items: int):
        super().__init__()
        self.batch = batch
        self.items = items

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        from floe_client.tensors import batch_to_tensors

        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        for _ in range(worker, self.items, workers):
            yield batch_to_tensors(self.batch)


class HandOverFloor(Contender):
    key, label = "loader-floor", "DataLoader(2) hand-over alone: ready items, no reading"
    analysable = False  # one batch over and over

    def __init__(self, table: BenchTable):
        first = _one_batch(readers.pads.dataset(table.paths, format="parquet").head(BATCH_ROWS).to_batches())
        # Its own buffers (``take``), not a slice of a larger read's: see _shuffled.
        first = first.take(pa.array(np.arange(first.num_rows)))
        self.data = HandOverDataset(first, table.rows // BATCH_ROWS)
        self.loader = torch.utils.data.DataLoader(
            self.data, batch_size=None, num_workers=WORKERS, multiprocessing_context="spawn"
        )

    def epoch(self, epoch: int):
        return iter(self.loader)


class NoCache(Contender):
    key, label = "no-cache", "no cache: pyarrow + shuffle buffer, DataLoader(2)"

    def __init__(self, table: BenchTable):
        self.data = ParquetShuffleDataset(table.paths)
        self.loader = torch.utils.data.DataLoader(
            self.data, batch_size=None, num_workers=WORKERS, multiprocessing_context="spawn"
        )

    def epoch(self, epoch: int):
        self.data.set_epoch(epoch)
        return iter(self.loader)


CONTENDERS = ("loader-shuffled", "loader-ordered", "loader-runs", "loader-persistent", "job-in-process", "job-runs",
              "plain-in-process", "no-cache", "loader-floor")


def _worker_processes() -> Dict[str, Any]:
    """What asks FloeDataLoader for worker processes: nothing where they are its default, else
    ``worker_processes=True`` (where it reads in the loop's process unless told otherwise)."""
    import inspect

    from floe_client.torch import FloeDataLoader

    return {"worker_processes": True} if "worker_processes" in inspect.signature(FloeDataLoader).parameters else {}


def make_contenders(keys: Sequence[str], address: str, table: BenchTable, run_rows: int = RUN_ROWS) -> List[Contender]:
    made = {
        "loader-shuffled": lambda: FloeLoader("loader-shuffled", "Floe shuffled job, FloeDataLoader as documented",
                                              address, SHUFFLED_JOB, True),
        "loader-ordered": lambda: FloeLoader("loader-ordered", "Floe ordered job, FloeDataLoader as documented",
                                             address, ORDERED_JOB, False),
        "loader-persistent": lambda: FloeLoader("loader-persistent",
                                                "Floe shuffled job, FloeDataLoader, persistent worker processes",
                                                address, SHUFFLED_JOB, True, persistent_workers=True,
                                                **_worker_processes()),
        "loader-runs": lambda: FloeLoader("loader-runs", f"Floe job shuffled in runs of {run_rows}, FloeDataLoader",
                                          address, RUNS_JOB, True, run_rows=run_rows),
        "job-in-process": lambda: JobInProcess(address),
        "job-runs": lambda: JobInProcess(address, run_rows),
        "plain-in-process": lambda: PlainInProcess(address),
        "no-cache": lambda: NoCache(table),
        "loader-floor": lambda: HandOverFloor(table),
    }
    return [made[key]() for key in keys]


# -- one epoch into the loop -----------------------------------------------------------------------


@dataclass
class Epoch:
    contender: str
    round: int  # 0: the first epoch after the load; -1: a warm-up
    epoch: int
    rows: int
    items: int
    seconds: float
    first_item_s: Optional[float]
    reader_cpu_s: float
    node_cpu_s: float
    short_items: int = 0  # items of other than 4,096 rows
    files_per_batch: Optional[float] = None  # warm-up epochs: distinct files of a batch's rows, mean
    duplicate_rows: Optional[int] = None  # warm-up epochs: rows received more than once
    # Warm-up epochs, how well rows are mixed (see shuffle_quality): runs of consecutive ids in a
    # batch, the share of a batch's neighbours that are neighbours in the table, and the rank
    # correlation between a row's place in the table and in the epoch.
    runs_per_batch: Optional[float] = None
    adjacent_share: Optional[float] = None
    rank_correlation: Optional[float] = None
    load_average: Optional[float] = None  # the machine's 1-minute load average at the epoch's end

    @property
    def rows_s(self) -> float:
        return self.rows / self.seconds


def run_epoch(contender: Contender, epoch: int, round_: int, node_pids: Sequence[int], nodes: Sequence[int],
              bounds: Optional[np.ndarray] = None) -> Epoch:
    """One epoch of ``contender`` into the loop. With ``bounds`` (the first id of each file) it
    also keeps a copy of every batch's ids, to tell after the epoch how batches mix and whether a
    row came twice."""
    ids: List[np.ndarray] = []
    rows = items = short = 0
    touched = 0.0
    first = None
    cpu, node_cpu = reader_cpu(nodes), sum(_proc_cpu(pid) for pid in node_pids)
    started = now()
    for item in contender.epoch(epoch):
        if first is None:
            first = now()
        n = int(item["id"].shape[0])
        touched += float(item["d"].sum())
        rows += n
        items += 1
        short += n != BATCH_ROWS
        if bounds is not None:
            ids.append(item["id"].numpy().copy())
    seconds = now() - started
    node_cpu = sum(_proc_cpu(pid) for pid in node_pids) - node_cpu
    cpu = reader_cpu(nodes) - cpu
    result = Epoch(contender.key, round_, epoch, rows, items, seconds, None if first is None else first - started,
                   cpu, node_cpu, short, load_average=os.getloadavg()[0])
    if bounds is not None and ids:
        result.files_per_batch = statistics.fmean(
            len(np.unique(np.searchsorted(bounds, batch, side="right"))) for batch in ids
        )
        every = np.concatenate(ids)
        result.duplicate_rows = int(every.size - np.unique(every).size)
        result.runs_per_batch, result.adjacent_share, result.rank_correlation = shuffle_quality(ids)
    return result


def shuffle_quality(batches: Sequence[np.ndarray]) -> Tuple[float, float, float]:
    """How well an epoch's rows are mixed, from the ids of its batches in order (the bench table's
    ids are the rows' places in its files): the mean count of runs of consecutive ids in a batch
    (4,096 for rows drawn one by one, 1 for a plain read: the independent draws a batch holds), the
    share of neighbours in a batch that are neighbours in the table, and Spearman's rank correlation
    between a row's place in the table and its place in the epoch (about 0 when the epoch forgets
    where rows were, 1 for the table's order)."""
    runs, adjacent, pairs = [], 0, 0
    for ids in batches:
        joined = np.diff(ids) == 1
        runs.append(int(ids.size - joined.sum()))
        adjacent += int(joined.sum())
        pairs += max(ids.size - 1, 0)
    every = np.concatenate(batches)
    places = np.empty(every.size, dtype=np.float64)
    places[np.argsort(every, kind="stable")] = np.arange(every.size, dtype=np.float64)
    correlation = float(np.corrcoef(np.arange(every.size, dtype=np.float64), places)[0, 1])
    return statistics.fmean(runs), adjacent / max(pairs, 1), correlation


# -- job plans on the wire -------------------------------------------------------------------------


def _location(endpoint: fl.FlightEndpoint, address: str) -> str:
    if not endpoint.locations:
        return address
    uri = endpoint.locations[0].uri
    uri = uri.decode() if isinstance(uri, bytes) else str(uri)
    return address if uri.startswith("arrow-flight-reuse-connection") else uri


def job_wire(address: str, job: str, epoch: int) -> Dict[str, Any]:
    """One whole shuffled epoch of ``job`` (rank 0 of 1) read with plain pyarrow.flight, planned
    ``CHUNK_BATCHES`` global batches at a time as the client plans it, every endpoint read in
    turn: what goes over the wire. Chunk 0 is planned again ``PLAN_SAMPLES`` times (warm)."""
    from floe_client import FloeClient, JobSpec
    from floe_client.jobs import job_descriptor

    spec = JobSpec(job, DATASET, BATCH_ROWS, seed=SEED, shuffle=True)
    with FloeClient(address) as client:
        client.register_job_spec(spec)
        batches = int(client.job_status(job, epoch)["batches_per_epoch"])
    options = [("grpc.max_receive_message_length", -1)]
    clients: Dict[str, fl.FlightClient] = {address: fl.connect(address, generic_options=options)}
    plan_s, plan_bytes, endpoints = [], [], []
    record_batches = empty = rows = 0
    try:
        started = now()
        for first in range(0, batches, CHUNK_BATCHES):
            descriptor = job_descriptor(spec, epoch, 1, 0, first, min(batches, first + CHUNK_BATCHES), 1)
            asked = now()
            info = clients[address].get_flight_info(descriptor)
            plan_s.append(now() - asked)
            plan_bytes.append(len(info.serialize()))
            endpoints.append(len(info.endpoints))
            for endpoint in info.endpoints:
                uri = _location(endpoint, address)
                if uri not in clients:
                    clients[uri] = fl.connect(uri, generic_options=options)
                for batch in readers.stream_batches(clients[uri].do_get(endpoint.ticket)):
                    record_batches += 1
                    empty += batch.num_rows == 0
                    rows += batch.num_rows
        seconds = now() - started
        descriptor = job_descriptor(spec, epoch, 1, 0, 0, min(batches, CHUNK_BATCHES), 1)
        warm = []
        for _ in range(PLAN_SAMPLES):
            asked = now()
            info = clients[address].get_flight_info(descriptor)
            warm.append(now() - asked)
    finally:
        for c in clients.values():
            c.close()
    return dict(
        epoch=epoch, global_batches=batches, chunk_batches=CHUNK_BATCHES, plans=len(plan_s), rows=rows,
        seconds=seconds, rows_s=rows / seconds, record_batches=record_batches, empty_record_batches=empty,
        endpoints_per_plan=statistics.median(endpoints), plan_bytes=statistics.median(plan_bytes),
        plan_bytes_max=max(plan_bytes), plan_ms_epoch_median=statistics.median(plan_s) * 1000,
        plan_ms=statistics.median(warm) * 1000,
    )


def job_reads(address: str, job: str, epochs: Sequence[int]) -> List[float]:
    """rows/s of whole shuffled epochs through FloeClient.read_job (no tensors), one per epoch."""
    from floe_client import FloeClient, JobSpec

    spec = JobSpec(job, DATASET, BATCH_ROWS, seed=SEED, shuffle=True)
    found = []
    with FloeClient(address) as client:
        client.register_job_spec(spec)
        for epoch in epochs:
            started, rows = now(), 0
            for _, batch in client.read_job(spec, epoch, 1, 0):
                rows += batch.num_rows
            found.append(rows / (now() - started))
    return found


# -- the node --------------------------------------------------------------------------------------


def direct_node_command(table: BenchTable) -> List[str]:
    """What ``./floe node`` runs, without its build check (for tests, where sources may be newer
    than the build): the same JVM flags (bin/floe-jvm-options) and classpath."""
    limit = readers.memory_limit_for(table)
    options = subprocess.run([str(ROOT / "bin" / "floe-jvm-options")], env={**os.environ, "FLOE_MEMORY_LIMIT": limit},
                             capture_output=True, text=True, check=True).stdout.split()
    modules = ("tools", "cluster", "flight-gateway", "actors", "loader", "initializer", "client", "protocol", "core")
    classpath = ":".join([*(str(ROOT / m / "target" / "classes") for m in modules),
                          (ROOT / "tools" / "target" / "runtime-classpath.txt").read_text().strip()])
    return ["env", "MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072", "java",
            "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            *options, "-cp", classpath, "io.floe.node.Main"]


def start_node(args, log: Path, table: BenchTable, slice_target: Optional[int] = None):
    command = direct_node_command(table) if args.node == "java" else None
    return readers.start_node(log, table, slice_target, command=command)


class Nodes:
    """The node or nodes the contenders read from: one (``./floe node`` as bench-readers starts
    it), or ``count`` forming one cluster on this machine (the first the seed; a majority of them
    needed for shards to be placed), the table loaded through the first once all are Up."""

    def __init__(self, args, log_dir: Path, table: BenchTable, count: int):
        self.members: List[readers.FloeNode] = []
        if count == 1:
            node, self.facts = start_node(args, log_dir / "node.log", table)
            self.members.append(node)
            return
        seed = readers.free_port()
        options = [
            f"-Dpekko.cluster.seed-nodes.0=pekko://floe@127.0.0.1:{seed}",
            f"-Dpekko.cluster.role.data.min-nr-of-members={count // 2 + 1}",
            "-Dfloe.security.ticket-secret=training-benchmark-secret-0123456789",
        ]
        try:
            for i in range(count):
                self.members.append(readers.FloeNode(
                    log_dir / f"node{i}.log", readers.memory_limit_for(table),
                    remote_port=seed if i == 0 else 0, java_options=options))
            serving = max(node.wait_serving() for node in self.members)
            with readers.floe_client(self.address) as client:
                deadline = time.monotonic() + 120
                while sum(m["status"] == "Up" for m in client.cluster()["members"]) < count:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"The {count} nodes did not form a cluster in 120 s")
                    time.sleep(0.5)
                started = now()
                status = client.load(readers.DATASET, table.metadata_location, wait=True)
                load_seconds = now() - started
            if status.get("state") != "READY":
                raise RuntimeError(f"The load ended {status.get('state')}: {status}")
            self.facts = dict(start_to_serving_s=serving, start_included_build=False, load_s=load_seconds,
                              load_rows_s=status["rows"] / load_seconds, status=status, nodes=count)
        except BaseException:
            self.stop()
            raise

    @property
    def address(self) -> str:
        return self.members[0].address

    @property
    def pids(self) -> List[int]:
        return [node.pid for node in self.members]

    def stop(self) -> None:
        for node in self.members:
            node.stop()


# -- the run ---------------------------------------------------------------------------------------


def measure(args, table: BenchTable, log_dir: Path) -> Dict[str, Any]:
    results: Dict[str, Any] = {"epochs": []}
    epochs: List[Epoch] = results["epochs"]
    starts, first_id = [], 0
    for f in table.files:
        starts.append(first_id)
        first_id += f.rows
    bounds = np.array(starts[1:], dtype=np.int64)  # file i holds ids [starts[i], starts[i + 1])
    print(f"starting {args.nodes} × ./floe node and loading the table ...", flush=True)
    node = Nodes(args, log_dir, table, args.nodes)
    facts = node.facts
    nodes = node.pids
    try:
        results["node"] = facts
        print(f"  start → serving {facts['start_to_serving_s']:.2f} s; load {facts['load_s']:.2f} s "
              f"({facts['status'].get('slices_total')} slices, {facts['status']['bytes']:,} bytes)", flush=True)
        contenders = make_contenders(args.contenders, node.address, table, args.run_rows)
        by_key = {c.key: c for c in contenders}
        next_epoch: Dict[str, int] = {}
        analysed = set()

        def run(contender: Contender, round_: int) -> Epoch:
            key = contender.job or contender.key
            epoch = next_epoch.get(key, 0)
            next_epoch[key] = epoch + 1
            # Each contender's first epoch also keeps its ids (a copy per item, microseconds),
            # looked at after the epoch's clock stopped.
            analyse = contender.analysable and contender.key not in analysed
            analysed.add(contender.key)
            result = run_epoch(contender, epoch, round_, nodes, nodes, bounds if analyse else None)
            epochs.append(result)
            mix = "" if result.files_per_batch is None else (
                f", {result.files_per_batch:.1f} files/batch, {result.runs_per_batch:,.0f} runs/batch, "
                f"{result.adjacent_share:.1%} neighbours adjacent, rank corr. {result.rank_correlation:+.3f}, "
                f"{result.duplicate_rows} rows twice")
            what = {0: "first epoch after load", -1: "warm-up"}.get(round_, f"round {round_}/{args.rounds}")
            print(f"  {what:<22} {contender.label:<62} {result.rows_s / 1e3:>8,.0f} k rows/s  first item "
                  f"{_s(result.first_item_s)}  CPU {result.reader_cpu_s:.2f} / node {result.node_cpu_s:.2f} s{mix}",
                  flush=True)
            return result

        try:
            if "loader-shuffled" in by_key:  # the node's first epoch after the load
                run(by_key["loader-shuffled"], 0)
            if not args.quick:
                for contender in contenders:
                    if contender.key != "loader-shuffled":
                        run(contender, -1)
            for r in range(1, args.rounds + 1):
                for contender in contenders:
                    for _ in range(args.epochs):
                        run(contender, r)
        finally:
            for contender in contenders:
                with contextlib.suppress(Exception):
                    contender.close()
        results["labels"] = {c.key: c.label for c in contenders}
        print("job plans on the wire (one shuffled epoch, plain pyarrow.flight) ...", flush=True)
        wire_epoch = next_epoch.get(SHUFFLED_JOB, 0)
        next_epoch[SHUFFLED_JOB] = wire_epoch + 1
        results["wire"] = job_wire(node.address, SHUFFLED_JOB, wire_epoch)
        print(f"  {_wire_line(results['wire'])}", flush=True)
        results["node"]["rss_after_reads"] = sum(rss_bytes(pid) for pid in nodes)
    finally:
        node.stop()
    return results


def sweep(args, log_dir: Path) -> List[Dict[str, Any]]:
    """The same rows written with small row groups, loaded as ~8 and ``--slices`` slices, one node
    each, all up together (started and loaded one after the other); the shuffled job read with
    ``read_job`` on each in turn (a warm-up epoch, then ``--rounds`` rounds of ``--epochs``), then
    its plans and record batches on the wire."""
    most = max(args.slices)
    # bench-readers' sweep table (2,048 row groups) unless more slices are asked for
    groups = readers.SWEEP_ROW_GROUPS if most <= readers.SWEEP_ROW_GROUPS else most + most // 20
    table = ensure_table(args.tables, args.rows, max(1, args.rows // groups))
    rows: List[Dict[str, Any]] = []
    nodes = []
    try:
        for wanted in [8, *args.slices]:
            target = readers.slice_target_for(table, wanted)
            print(f"sweep: ~{wanted:,} slices (FLOE_SLICE_TARGET_SIZE={target}B) ...", flush=True)
            node, facts = start_node(args, log_dir / f"node-sweep-{wanted}.log", table, target)
            nodes.append(node)
            rows.append(dict(wanted=wanted, slice_target_bytes=target, slices=facts["status"].get("slices_total"),
                             bytes=facts["status"]["bytes"], load_s=facts["load_s"], job_rows_s=[]))
            print(f"  {rows[-1]['slices']:,} slices loaded in {facts['load_s']:.1f} s", flush=True)
        for node in nodes:
            job_reads(node.address, SHUFFLED_JOB, [0])  # warm-up
        epoch = 1
        for r in range(args.rounds):
            for node, row in zip(nodes, rows):
                row["job_rows_s"] += job_reads(node.address, SHUFFLED_JOB, range(epoch, epoch + args.epochs))
            epoch += args.epochs
            print(f"  round {r + 1}/{args.rounds}: read_job " + ", ".join(
                f"{row['slices']:,} slices {statistics.fmean(row['job_rows_s'][-args.epochs:]) / 1e3:,.0f} k rows/s"
                for row in rows), flush=True)
        for node, row in zip(nodes, rows):
            reads = row["job_rows_s"]
            row.update(job_rows_s_median=statistics.median(reads), job_rows_s_best=max(reads),
                       wire=job_wire(node.address, SHUFFLED_JOB, epoch))
            print(f"  {row['slices']:,} slices: read_job {row['job_rows_s_median'] / 1e3:,.0f} k rows/s median "
                  f"({row['job_rows_s_best'] / 1e3:,.0f} best); {_wire_line(row['wire'])}", flush=True)
    finally:
        for node in nodes:
            node.stop()
    base = rows[0]
    for row in rows:
        row["job_vs_8"] = row["job_rows_s_median"] / base["job_rows_s_median"]
        row["plan_bytes_vs_8"] = row["wire"]["plan_bytes"] / base["wire"]["plan_bytes"]
        row["plan_ms_vs_8"] = row["wire"]["plan_ms"] / base["wire"]["plan_ms"]
    return rows


# -- figures ---------------------------------------------------------------------------------------


@dataclass
class Summary:
    key: str
    label: str
    rounds_rows_s: List[float]  # per round: its rows over its epochs' wall time
    epochs_rows_s: List[float]
    first_item_s: Optional[float]  # median over the measured epochs
    reader_cpu_s: float  # mean per epoch
    node_cpu_s: float
    rows_per_epoch: float
    files_per_batch: Optional[float] = None
    duplicate_rows: Optional[int] = None

    @property
    def median(self) -> float:
        return statistics.median(self.rounds_rows_s)

    @property
    def best(self) -> float:
        return max(self.rounds_rows_s)


def summaries(results: Dict[str, Any], args) -> Dict[str, Summary]:
    epochs: List[Epoch] = results["epochs"]
    found = {}
    for key, label in results["labels"].items():
        measured = [e for e in epochs if e.contender == key and e.round >= 1]
        if not measured:
            continue
        rounds = []
        for r in range(1, args.rounds + 1):
            these = [e for e in measured if e.round == r]
            if these:
                rounds.append(sum(e.rows for e in these) / sum(e.seconds for e in these))
        firsts = [e.first_item_s for e in measured if e.first_item_s is not None]
        analysed = [e for e in epochs if e.contender == key and e.files_per_batch is not None]
        found[key] = Summary(
            key, label, rounds, [e.rows_s for e in measured], statistics.median(firsts) if firsts else None,
            statistics.fmean(e.reader_cpu_s for e in measured), statistics.fmean(e.node_cpu_s for e in measured),
            statistics.fmean(e.rows for e in measured),
            analysed[0].files_per_batch if analysed else None, analysed[0].duplicate_rows if analysed else None,
        )
    return found


@dataclass
class Ratio:
    code: str
    text: str
    median: Optional[float]  # ratio of the medians
    best: Optional[float] = None  # ratio of the bests
    per_round: Optional[float] = None  # median of the per-round ratios
    target: Optional[str] = None
    met: Optional[bool] = None
    note: str = ""
    short: str = ""  # the chart's label

    @property
    def verdict(self) -> str:
        return "" if self.met is None else ("met" if self.met else "NOT MET")


def _per_round(a: Summary, b: Summary) -> Optional[float]:
    pairs = [x / y for x, y in zip(a.rounds_rows_s, b.rounds_rows_s) if y]
    return statistics.median(pairs) if pairs else None


def ratios(results: Dict[str, Any], s: Dict[str, Summary]) -> List[Ratio]:
    found: List[Ratio] = []

    def speed(code, a, b, text, goal=None, test=None, short=""):
        if a in s and b in s:
            m = s[a].median / s[b].median
            found.append(Ratio(code, text, m, s[a].best / s[b].best, _per_round(s[a], s[b]), goal,
                               None if test is None else test(m), short=short))

    speed("a", "loader-shuffled", "loader-ordered", "shuffled ÷ unshuffled job, both through the documented loader",
          "≥ 0.8×", lambda m: m >= 0.8, "shuffled ÷ unshuffled, loader")
    speed("a", "loader-shuffled", "plain-in-process",
          "shuffled through the loader ÷ plain read into tensors in the loop's process", "≥ 0.5× (within 2×)",
          lambda m: m >= 0.5, "loader, shuffled ÷ plain in the loop")
    speed("a", "job-in-process", "plain-in-process", "shuffled job in the loop's process ÷ plain read in it")
    speed("a", "loader-runs", "loader-ordered", "shuffled in runs ÷ unshuffled job, both through the loader")
    speed("a", "job-runs", "plain-in-process", "shuffled in runs, in the loop's process ÷ plain read in it")
    speed("a", "loader-persistent", "loader-shuffled", "persistent worker processes ÷ the documented loader")
    speed("a", "loader-shuffled", "loader-floor", "shuffled through the loader ÷ DataLoader hand-over alone")
    speed("a", "loader-ordered", "loader-floor", "unshuffled through the loader ÷ DataLoader hand-over alone")
    speed("b", "loader-shuffled", "no-cache", "shuffled through the loader ÷ the no-cache loader", "≥ 3×",
          lambda m: m >= 3.0, "loader, shuffled ÷ no-cache loader")
    speed("b", "plain-in-process", "no-cache", "plain read in the loop's process ÷ the no-cache loader")
    speed("b", "job-in-process", "no-cache", "shuffled job in the loop's process ÷ the no-cache loader")
    speed("b", "no-cache", "loader-floor", "the no-cache loader ÷ DataLoader hand-over alone")
    if "plain-in-process" in s:
        plain = s["plain-in-process"].node_cpu_s
        for key in ("loader-shuffled", "job-in-process", "loader-runs", "job-runs", "loader-ordered"):
            if key in s and plain > 0:
                m = s[key].node_cpu_s / plain
                found.append(Ratio("c", f"node CPU per epoch, {s[key].label} ÷ plain read", m, target="≤ 3×",
                                   met=m <= 3.0 if key == "loader-shuffled" else None,
                                   note=f"{s[key].node_cpu_s:.2f} s ÷ {plain:.2f} s",
                                   short=f"node CPU, {key} ÷ plain"))
    sweep_rows = results.get("sweep")
    if sweep_rows:
        base = sweep_rows[0]
        for row in sweep_rows[1:]:
            wire = row["wire"]
            met = row["job_vs_8"] >= 0.8 and row["plan_bytes_vs_8"] <= 1.5 and row["plan_ms_vs_8"] <= 1.5 \
                and wire["empty_record_batches"] == 0
            found.append(Ratio(
                "d", f"{row['slices']:,} ÷ {base['slices']} slices: shuffled job, read_job", row["job_vs_8"],
                row["job_rows_s_best"] / base["job_rows_s_best"], None,
                "≥ 0.8×; plan bytes and time ≤ 1.5×; 0 empty", met,
                f"plan bytes {row['plan_bytes_vs_8']:.2f}×, time {row['plan_ms_vs_8']:.2f}×; "
                f"{wire['empty_record_batches']:,}/{wire['record_batches']:,} batches empty",
                f"{row['slices']:,} ÷ {base['slices']} slices, shuffled job"))
    wire = results.get("wire")
    if wire:
        found.append(Ratio("d", f"main node ({results['node']['status'].get('slices_total')} slices): empty record "
                                "batches, shuffled epoch", None, target="0",
                           met=wire["empty_record_batches"] == 0,
                           note=f"{wire['empty_record_batches']:,}/{wire['record_batches']:,}; plan "
                                f"{wire['plan_bytes']:,.0f} bytes, {wire['plan_ms']:.1f} ms"))
    first = [e for e in results["epochs"] if e.round == 0]
    if first and "loader-shuffled" in s:
        later = statistics.median(s["loader-shuffled"].epochs_rows_s)
        m = first[0].rows_s / later
        found.append(Ratio("e", "first epoch after the load ÷ later epochs (documented loader, shuffled)", m,
                           target="≥ 0.9×", met=m >= 0.9,
                           note=f"{first[0].rows_s / 1e3:,.0f} k ÷ {later / 1e3:,.0f} k rows/s; first item "
                                f"{_s(first[0].first_item_s)}", short="first epoch after load ÷ later"))
        latency = s["loader-shuffled"].first_item_s
        found.append(Ratio("e", "first batch of an epoch, documented loader (median)", None, target="≤ 0.2 s",
                           met=None if latency is None else latency <= 0.2, note=_s(latency)))
    return found


def _s(seconds: Optional[float]) -> str:
    return "–" if seconds is None else (f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s")


def _x(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f}×"


def _wire_line(wire: Dict[str, Any]) -> str:
    return (f"plan {wire['plan_bytes']:,.0f} bytes ({wire['endpoints_per_plan']:.0f} endpoints) in {wire['plan_ms']:.1f} ms "
            f"warm ({wire['plan_ms_epoch_median']:.1f} ms per chunk in the epoch); {wire['empty_record_batches']:,} of {wire['record_batches']:,} record batches empty; "
            f"{wire['rows_s'] / 1e3:,.0f} k rows/s endpoint by endpoint")


def print_summary(results: Dict[str, Any], s: Dict[str, Summary], found: List[Ratio]) -> None:
    print(f"\n{'into the training loop (4,096-row batches)':<64} {'rows/s median':>14} {'(best)':>9} "
          f"{'first item':>11} {'CPU s/epoch: readers':>21} {'node':>6} {'files/batch':>12}")
    for key in results["labels"]:
        if key not in s:
            continue
        x = s[key]
        mix = "–" if x.files_per_batch is None else f"{x.files_per_batch:.1f}"
        print(f"{x.label:<64} {x.median / 1e3:>12,.0f} k {x.best / 1e3:>7,.0f} k {_s(x.first_item_s):>11} "
              f"{x.reader_cpu_s:>21.2f} {x.node_cpu_s:>6.2f} {mix:>12}")
    first = [e for e in results["epochs"] if e.round == 0]
    if first:
        e = first[0]
        print(f"{'  first epoch after the load (documented loader, shuffled)':<64} {e.rows_s / 1e3:>12,.0f} k "
              f"{'':>9} {_s(e.first_item_s):>11} {e.reader_cpu_s:>21.2f} {e.node_cpu_s:>6.2f}")
    if results.get("sweep"):
        print(f"\n{'slices':>8} {'load':>7} {'read_job rows/s median (best)':>30} {'÷ 8':>6} {'plan bytes':>11} "
              f"{'÷ 8':>6} {'plan ms':>8} {'÷ 8':>6} {'endpoints':>9} {'empty record batches':>21}")
        for row in results["sweep"]:
            w = row["wire"]
            print(f"{row['slices']:>8,} {row['load_s']:>6.1f}s {row['job_rows_s_median'] / 1e3:>19,.0f} k "
                  f"({row['job_rows_s_best'] / 1e3:,.0f} k) {row['job_vs_8']:>5.2f}× {w['plan_bytes']:>11,.0f} "
                  f"{row['plan_bytes_vs_8']:>5.2f}× {w['plan_ms']:>8.1f} {row['plan_ms_vs_8']:>5.2f}× "
                  f"{w['endpoints_per_plan']:>9.0f} {w['empty_record_batches']:>10,}/{w['record_batches']:,}")
    print("\nratios (same run; median of rounds, [best], {median of per-round ratios}); issue 20 targets:")
    for r in found:
        figure = _x(r.median) if r.median is not None else ""
        extra = "".join([f" [{_x(r.best)}]" if r.best is not None else "",
                         f" {{{_x(r.per_round)}}}" if r.per_round is not None else ""])
        print(f"  ({r.code}) {r.text:<86} {figure:>7}{extra:<18} {r.note:<56} "
              f"{('target ' + r.target) if r.target else '':<36} {r.verdict}")


def draw_chart(path: Path, results: Dict[str, Any], s: Dict[str, Summary], found: List[Ratio], args,
               machine: Dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep_rows = results.get("sweep")
    widths = [3, 2] + ([2] if sweep_rows else [])
    figure, axes = plt.subplots(1, len(widths), figsize=(19 if sweep_rows else 15, 6),
                                gridspec_kw={"width_ratios": widths})
    keys = [k for k in results["labels"] if k in s]
    ys = list(range(len(keys)))
    colours = {"loader-shuffled": "#1f77b4", "loader-ordered": "#aec7e8", "loader-persistent": "#17becf",
               "job-in-process": "#9467bd", "plain-in-process": "#2ca02c", "no-cache": "#ff7f0e", "loader-floor": "#c7c7c7"}
    medians = [s[k].median / 1e6 for k in keys]
    axis = axes[0]
    axis.barh(ys, medians, color=[colours.get(k, "#7f7f7f") for k in keys])
    axis.plot([s[k].best / 1e6 for k in keys], ys, "k|", markersize=14)
    axis.set_xscale("log")
    axis.set_yticks(ys, [s[k].label for k in keys], fontsize=8)
    axis.invert_yaxis()
    axis.set_xlabel("M rows/s into the loop (median round; | = best), log scale")
    axis.set_title("Into a training loop, 4,096-row batches")
    for y, value in zip(ys, medians):
        axis.text(value, y, f" {value:.2f} M", va="center", fontsize=8)
    shown = [r for r in found if r.median is not None and r.target]
    axis = axes[1]
    ys = list(range(len(shown)))
    values = [r.median for r in shown]
    axis.barh(ys, values, color=["#7f7f7f" if r.met is None else "#2ca02c" if r.met else "#d62728" for r in shown])
    for y, r in zip(ys, shown):
        goal = float(r.target.split("×")[0].split()[-1])
        axis.plot([goal, goal], [y - 0.4, y + 0.4], "k-", linewidth=2)
        axis.text(r.median, y, f" {r.median:.2f}×", va="center", fontsize=8)
    axis.set_xscale("log")
    axis.set_yticks(ys, [f"({r.code}) {r.short or r.text[:40]}" for r in shown], fontsize=8)
    axis.invert_yaxis()
    axis.set_xlabel("ratio of medians (bar) and issue 20's target (black line), log scale")
    axis.set_title("Ratios")
    if sweep_rows:
        axis = axes[2]
        xs = list(range(len(sweep_rows)))
        axis.bar(xs, [row["job_rows_s_median"] / 1e6 for row in sweep_rows], color="#9467bd")
        for x, row in zip(xs, sweep_rows):
            w = row["wire"]
            axis.text(x, row["job_rows_s_median"] / 1e6, f"plan {w['plan_bytes'] / 1024:,.0f} KiB\n"
                      f"{w['empty_record_batches']:,} empty", ha="center", va="bottom", fontsize=8)
        axis.set_xticks(xs, [f"{row['slices']:,}" for row in sweep_rows])
        axis.set_xlabel("slices of the same rows")
        axis.set_ylabel("M rows/s, shuffled job, read_job (median)")
        axis.set_ylim(0, max(row["job_rows_s_median"] for row in sweep_rows) / 1e6 * 1.35)
        axis.set_title("(d) by slice count")
    figure.suptitle(f"./floe bench-training --rows {args.rows} --rounds {args.rounds} --epochs {args.epochs}"
                    f"{' --slices-sweep' if sweep_rows else ''}: {dt.date.today()}, {machine['cores']} cores, "
                    f"commit {machine['commit']}", fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_json(path: Path, machine, table: BenchTable, args, results, s, found) -> None:
    document = dict(
        date=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        command="./floe bench-training " + " ".join(sys.argv[1:]),
        machine=machine, load_average_after=os.getloadavg(), table=asdict(table),
        settings=dict(rows=args.rows, rounds=args.rounds, epochs=args.epochs, contenders=args.contenders,
                      batch_rows=BATCH_ROWS, workers=WORKERS, shuffle_buffer_rows=SHUFFLE_BUFFER_ROWS, seed=SEED,
                      quick=args.quick, node=args.node),
        node=results["node"], wire=results.get("wire"), sweep=results.get("sweep"),
        contenders={k: {**asdict(v), "median_rows_s": v.median, "best_rows_s": v.best} for k, v in s.items()},
        ratios=[{**asdict(r), "verdict": r.verdict} for r in found],
        epochs=[{**asdict(e), "rows_s": e.rows_s} for e in results["epochs"]],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, default=str))


def parse_args(argv: Sequence[str]):
    parser = argparse.ArgumentParser(
        prog="./floe bench-training",
        description="Rows/s of tensors into a training loop: Floe's documented loader (shuffled and ordered jobs), "
        "Floe read in the loop's process, and a no-cache pyarrow loader, in one run; prints issue 20's ratios.",
    )
    parser.add_argument("--rows", type=int, default=None, help="rows of the table (default 4,000,000; --quick 200,000)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds, contenders taking turns (default 3; --quick 1)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs per contender in each round (default 2; --quick 1)")
    parser.add_argument("--contenders", default=",".join(CONTENDERS),
                        help=f"which, in turn order, comma-separated (default all: {','.join(CONTENDERS)})")
    parser.add_argument("--nodes", type=int, default=1,
                        help="nodes the contenders read from, one cluster on this machine (default 1; issue 20's "
                             "(g) is 3); node CPU is theirs summed")
    parser.add_argument("--slices-sweep", action="store_true",
                        help="also load the rows (small row groups) as ~8 and --slices slices: job reads and plans")
    parser.add_argument("--slices", default="2000", help="slice counts of the sweep besides 8 (default 2000)")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-training",
                        help="JSON figures, chart and node logs (default data/bench-training)")
    parser.add_argument("--chart", type=Path, default=None, help="the PNG chart (default <out>/training-<date>.png)")
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "bench-readers",
                        help="where the tables are written and reused (default data/bench-readers, shared with "
                        "./floe bench-readers)")
    parser.add_argument("--node", choices=("floe", "java"), default="floe",
                        help="start the node with ./floe node (default) or the same java command without the "
                        "launcher's build check (tests)")
    parser.add_argument("--run-rows", type=int, default=RUN_ROWS,
                        help=f"the unit of the runs contenders' shuffle (default {RUN_ROWS})")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 200,000 rows, 1 round of 1 epoch, no warm-up epochs")
    args = parser.parse_args(argv)
    args.rows = args.rows if args.rows is not None else (200_000 if args.quick else 4_000_000)
    args.rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    args.epochs = args.epochs if args.epochs is not None else (1 if args.quick else 2)
    args.contenders = [k.strip() for k in args.contenders.split(",") if k.strip()]
    unknown = [k for k in args.contenders if k not in CONTENDERS]
    if unknown or not args.contenders:
        parser.error(f"--contenders: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(CONTENDERS)}")
    try:
        args.slices = sorted({int(k) for k in args.slices.split(",") if k.strip()})
    except ValueError:
        parser.error(f"--slices takes counts like 2000 or 2000,20000, not {args.slices!r}")
    if not args.slices or args.slices[0] <= 8:
        parser.error("--slices: counts above 8")
    if args.rows < 4 * BATCH_ROWS or args.rounds < 1 or args.epochs < 1:
        parser.error(f"--rows must be at least {4 * BATCH_ROWS:,}, --rounds and --epochs at least 1")
    args.out, args.tables = args.out.resolve(), args.tables.resolve()
    return args


def check_build() -> None:
    missing = [p for p in ("tools/target/runtime-classpath.txt", "tools/target/classes", "cluster/target/classes",
                           "flight-gateway/target/classes", "loader/target/classes") if not (ROOT / p).exists()]
    if missing:
        raise SystemExit(f"bench-training: the Java build is missing ({', '.join(missing)}): "
                         f"run `mvn -B -q -DskipTests package` at {ROOT} first (./floe bench-training does)")


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    check_build()
    readers._stop_on_sigterm()
    machine = machine_info()
    run_id = dt.datetime.now().strftime("%Y-%m-%dT%H%M%S")
    log_dir = args.out / "logs" / run_id
    table = ensure_table(args.tables, args.rows)
    print(f"Floe training-loop benchmark, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit "
          f"{machine['commit']}")
    print(f"machine: {machine['cores']} cores, {machine['model']}, {machine['memory_gib']} GiB; load average "
          f"{', '.join(f'{x:.2f}' for x in machine['load_average'])}; {machine['java']}; Python {machine['python']}, "
          f"pyarrow {machine['pyarrow']}, torch {torch.__version__}")
    print(f"table: {table.rows:,} rows, {len(table.files)} Parquet files ({table.row_groups} row groups), "
          f"{table.parquet_bytes / MB:,.1f} MB Parquet, {table.arrow_bytes / MB:,.1f} MB Arrow")
    print(f"run: batches of {BATCH_ROWS:,} rows, {WORKERS} spawned DataLoader workers, one rank; the first epoch "
          f"after the load, {'no' if args.quick else 'one'} warm-up epoch per other contender, then {args.rounds} "
          f"rounds of {args.epochs} epochs per contender, contenders taking turns\n", flush=True)
    results = measure(args, table, log_dir)
    if args.slices_sweep:
        results["sweep"] = sweep(args, log_dir)
    found_summaries = summaries(results, args)
    found = ratios(results, found_summaries)
    print_summary(results, found_summaries, found)
    json_path = args.out / f"training-{run_id}.json"
    write_json(json_path, machine, table, args, results, found_summaries, found)
    chart = args.chart or args.out / f"training-{run_id}.png"
    draw_chart(chart, results, found_summaries, found, args, machine)
    print(f"\nfigures: {json_path}\nchart:   {chart}\nnode logs: {log_dir}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("\nbench-training: stopped; every process it started was stopped", file=sys.stderr)
        sys.exit(130)
