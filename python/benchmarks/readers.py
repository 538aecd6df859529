"""Floe as trainers read it: Python reader processes with plain ``pyarrow.flight``, side by side
with two baselines, in one run, as ratios (the targets of issue 10).

Run it as ``./floe bench-readers [--rows N] [--rounds R] [--reads N] [--readers 1,4]
[--slices-sweep] [--out DIR] [--chart PNG]`` (defaults: 4,000,000 rows, 3 rounds of 3 reads per
contender, 1 and 4 readers).

Method
------
1. **The table**: a neutral Iceberg table written by PyIceberg (a SQLite ``SqlCatalog`` and a
   local ``file://`` warehouse under ``data/bench-readers/``): N rows in 8 Parquet files from 8
   appends, ZSTD, columns ``id`` long, ``i`` int, ``f`` float, ``d`` double, ``s1`` string (6-10
   characters from a vocabulary of 50,000), ``s2`` string (20-28 random characters), ``ts``
   timestamptz; deterministic (``numpy.random.RandomState``). A marker file (``table.json``)
   lets later runs with the same N reuse it.
2. **The contenders**, each in processes of its own, and none of them in this process:

   - *Floe*: ``./floe node`` (the launcher's JVM flags, Flight on 127.0.0.1, management off),
     loaded with the table's metadata location (``wait: true``); k reader processes, reader j
     reading shard j of k: ``GetFlightInfo`` with ``{"dataset", "shard_index", "shard_count"}``,
     then ``DoGet`` of every endpoint at its location, ``read_chunk()`` to the end.
   - *Direct decode*: ``pyarrow.dataset`` over the same Parquet files, k processes each decoding
     its share of the files (``to_batches(batch_size=32768)``, pyarrow's default threads): what a
     trainer does without a cache.
   - *Arrow C++ Flight server*: a small ``pyarrow.flight.FlightServerBase`` process holding the
     same rows in memory as 32,768-row record batches (one buffer per batch, as Floe packs a
     slice) that answers the same descriptors (shard j of k: its contiguous rows, one endpoint)
     with a ``RecordBatchStream``: the same protocol and reader, served by Arrow's C++ Flight.
   - *Training jobs*: one process reading one whole epoch through the Floe client
     (``FloeClient.read_job``, ``batch_rows=8192``, ``seed=1``) with shuffle on, and again with
     shuffle off, compared with the plain stream of the same rows (Floe, 1 reader).

   Reader processes are started (``spawn``) once and reused; for each read they connect first,
   then all start together on one signal. After the first Floe read (a figure of its own, see
   below) every contender makes one warm-up read that is not kept. Then contenders take turns
   within every round (round 1: A, B, C, ...; round 2: again), each making ``--reads`` reads in
   its turn, because these machines are shared and noisy and one read of a few hundred MB takes
   well under a second; every figure is reported as its best and its median read.
3. **Also measured**: the node's start (process start until the ``list`` action answers), the
   load (seconds and rows/s, against the direct decode's rows/s), the first read right after the
   load against the later ones, reader 0's first-batch latency (end of ``GetFlightInfo`` to the
   first batch), and the node's RSS (``VmRSS``) after the load and after every read against the
   Arrow bytes it holds (``status["bytes"]``). ``--slices-sweep`` loads the same rows cut into
   about 8, 100, 1,000 and 2,000 slices (``FLOE_SLICE_TARGET_SIZE``, one node start each; the
   table is written a second time with small row groups, since a slice is whole row groups).

Reading the output
------------------
MB/s is Arrow bytes received (``RecordBatch.nbytes``, 10^6 bytes per MB) over the wall time of
the slowest reader, from the common start signal. Each figure line gives its best and median
round and its ratio to its baseline (ratio of the bests, ratio of the medians). The targets of
issue 10 follow, one line each, judged on the ratio of the bests, saying met or not met. Absolute
figures wander ±30 % between runs on these machines; compare ratios. The figures also go to
``<out>/readers-<date>.json`` and a bar chart to ``docs/benchmarks-readers.png``.

Every process this starts listens on 127.0.0.1 only and is stopped by its PID when the run ends,
also on Ctrl-C or an error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import platform
import queue
import signal
import socket
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.flight as fl

ROOT = Path(__file__).resolve().parents[2]
DATASET = "bench_readers"
ARROW_DATASET = "bench_readers"
FILES = 8
SEED = 20261123
BATCH_ROWS = 32_768
JOB_BATCH_ROWS = 8_192
JOB_SEED = 1
SHUFFLED_JOB, ORDERED_JOB = "bench-shuffled", "bench-ordered"
JOB_LABEL, JOB_READ = "Floe job epoch", "(read_job, W=1)"
S1_VOCABULARY = 50_000
TABLE_FORMAT = 1  # bump when the table's content changes, so old tables are rewritten
SWEEP_ROW_GROUPS = 2_048
SWEEP_SLICES = (8, 100, 1_000, 2_000)
NODE_START_TIMEOUT = 300.0
READ_TIMEOUT = 900.0
MB = 1e6
MIB = 1 << 20

now = time.perf_counter  # CLOCK_MONOTONIC on Linux: comparable between processes


# -- the table -----------------------------------------------------------------------------------


@dataclass
class DataFile:
    path: str  # a local path
    bytes: int
    rows: int
    row_group_lengths: List[int]  # what Floe's planner sees as the file's row-group tasks


@dataclass
class BenchTable:
    rows: int
    metadata_location: str
    files: List[DataFile]
    arrow_bytes: int  # of the rows as written (pyarrow's nbytes)
    row_group_rows: Optional[int] = None
    format: int = TABLE_FORMAT
    seed: int = SEED

    @property
    def parquet_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def row_groups(self) -> int:
        return sum(len(f.row_group_lengths) for f in self.files)

    @property
    def paths(self) -> List[str]:
        return [f.path for f in self.files]

    @staticmethod
    def from_json(node: Dict[str, Any]) -> "BenchTable":
        files = [DataFile(**f) for f in node.pop("files")]
        return BenchTable(files=files, **node)


def arrow_schema() -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.int64()),
            ("i", pa.int32()),
            ("f", pa.float32()),
            ("d", pa.float64()),
            ("s1", pa.string()),
            ("s2", pa.string()),
            ("ts", pa.timestamp("us", tz="UTC")),
        ]
    )


def random_strings(rng, count: int, shortest: int, longest: int) -> pa.Array:
    """``count`` strings of ``shortest``..``longest`` random letters and digits."""
    import numpy as np

    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", dtype=np.uint8)
    lengths = rng.randint(shortest, longest + 1, size=count)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = alphabet[rng.randint(0, len(alphabet), size=int(offsets[-1]))]
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes()))


def generate_rows(first: int, stop: int, part: int) -> pa.Table:
    """Rows ``[first, stop)`` of the table, the same on every machine for the same part."""
    import numpy as np

    rng = np.random.RandomState(SEED + part)
    vocabulary = random_strings(np.random.RandomState(SEED), S1_VOCABULARY, 6, 10)
    count = stop - first
    start_us = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
    columns = [
        pa.array(np.arange(first, stop, dtype=np.int64)),
        pa.array(rng.randint(-(2**31), 2**31 - 1, size=count, dtype=np.int32)),
        pa.array(rng.standard_normal(count).astype(np.float32)),
        pa.array(rng.standard_normal(count) * 1000.0),
        vocabulary.take(pa.array(rng.randint(0, S1_VOCABULARY, size=count))),
        random_strings(rng, count, 20, 28),
        pa.array(start_us + rng.randint(0, 365 * 86_400 * 1_000_000, size=count, dtype=np.int64)).cast(
            pa.timestamp("us", tz="UTC")
        ),
    ]
    return pa.Table.from_arrays(columns, schema=arrow_schema())


def _local_path(location: str) -> str:
    return location[len("file://") :] if location.startswith("file://") else location


def _data_files(table) -> Dict[str, DataFile]:
    files = table.inspect.files().to_pylist()
    result = {}
    for f in files:
        size = int(f["file_size_in_bytes"])
        offsets = sorted(f.get("split_offsets") or [4])
        lengths = [b - a for a, b in zip(offsets, offsets[1:])] + [size - offsets[-1]]
        path = _local_path(f["file_path"])
        result[path] = DataFile(path, size, int(f["record_count"]), lengths)
    return result


def write_table(directory: Path, rows: int, row_group_rows: Optional[int]) -> BenchTable:
    """Writes the table with PyIceberg: 8 appends of N/8 rows, one Parquet file each."""
    import shutil

    from pyiceberg.catalog.sql import SqlCatalog

    if directory.exists():
        shutil.rmtree(directory)
    (directory / "warehouse").mkdir(parents=True)
    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{directory / 'catalog.db'}", warehouse=f"file://{directory / 'warehouse'}"
    )
    catalog.create_namespace("bench")
    properties = {"write.parquet.compression-codec": "zstd"}
    if row_group_rows:
        properties["write.parquet.row-group-limit"] = str(row_group_rows)
    table = catalog.create_table("bench.readers", schema=arrow_schema(), properties=properties)
    files: List[DataFile] = []
    arrow_bytes = 0
    for part in range(FILES):
        data = generate_rows(rows * part // FILES, rows * (part + 1) // FILES, part)
        arrow_bytes += data.nbytes
        before = set(_data_files(table))
        table.append(data)
        after = _data_files(table)
        files.extend(after[p] for p in sorted(set(after) - before))  # in commit order
    return BenchTable(rows, table.metadata_location, files, arrow_bytes, row_group_rows)


def ensure_table(base: Path, rows: int, row_group_rows: Optional[int] = None) -> BenchTable:
    """The table of ``rows`` rows under ``base``: reused when its marker says it is the same,
    written otherwise."""
    name = f"table-{rows}" + (f"-rg{row_group_rows}" if row_group_rows else "")
    directory = base / name
    marker = directory / "table.json"
    if marker.exists():
        try:
            table = BenchTable.from_json(json.loads(marker.read_text()))
            usable = (
                table.rows == rows
                and table.format == TABLE_FORMAT
                and table.row_group_rows == row_group_rows
                and Path(_local_path(table.metadata_location)).exists()
                and all(Path(f.path).exists() for f in table.files)
            )
            if usable:
                print(f"table: reusing {directory}", flush=True)
                return table
        except (ValueError, KeyError, TypeError):
            pass
    print(f"table: writing {rows:,} rows with PyIceberg into {directory} ...", flush=True)
    started = now()
    table = write_table(directory, rows, row_group_rows)
    marker.write_text(json.dumps(asdict(table), indent=1))
    print(f"table: written in {now() - started:.1f} s", flush=True)
    return table


# -- reads, run in reader processes ---------------------------------------------------------------


class Tally:
    """Counts what a reader received."""

    def __init__(self) -> None:
        self.bytes = 0
        self.rows = 0
        self.batches = 0
        self.empty_batches = 0
        self.first_batch_at: Optional[float] = None

    def add(self, batch: pa.RecordBatch) -> None:
        if self.first_batch_at is None:
            self.first_batch_at = now()
        self.bytes += batch.nbytes
        self.rows += batch.num_rows
        self.batches += 1
        if batch.num_rows == 0:
            self.empty_batches += 1

    def result(self, started: float, planned: Optional[float], **extra) -> Dict[str, Any]:
        ended = now()
        first = None
        if self.first_batch_at is not None and planned is not None:
            first = self.first_batch_at - planned
        return dict(
            bytes=self.bytes, rows=self.rows, batches=self.batches, empty_batches=self.empty_batches,
            started=started, ended=ended, plan_seconds=None if planned is None else planned - started,
            first_batch_seconds=first, **extra,
        )


_FLIGHT_CLIENTS: Dict[str, fl.FlightClient] = {}


def stream_batches(reader: fl.FlightStreamReader) -> Iterator[pa.RecordBatch]:
    """A DoGet stream's record batches, as they arrive (``read_chunk`` until the end)."""
    while True:
        try:
            chunk = reader.read_chunk()
        except StopIteration:
            return
        if chunk.data is not None:
            yield chunk.data


def flight_client(uri: str) -> fl.FlightClient:
    """One client per server and reader process, kept between reads as a trainer keeps its own."""
    client = _FLIGHT_CLIENTS.get(uri)
    if client is None:
        client = fl.connect(uri, generic_options=[("grpc.max_receive_message_length", -1)])
        _FLIGHT_CLIENTS[uri] = client
    return client


@dataclass
class ShardRead:
    """Shard ``index`` of ``count`` of a dataset from a Flight server, with plain pyarrow.flight:
    GetFlightInfo, then every endpoint's DoGet at its location, in order."""

    address: str
    dataset: str
    index: int
    count: int

    def prepare(self) -> None:
        client = flight_client(self.address)
        for _ in client.list_flights():  # connected before the start signal
            pass

    def run(self) -> Dict[str, Any]:
        command = json.dumps({"dataset": self.dataset, "shard_index": self.index, "shard_count": self.count})
        tally = Tally()
        started = now()
        info = flight_client(self.address).get_flight_info(fl.FlightDescriptor.for_command(command))
        planned = now()
        for endpoint in info.endpoints:
            for batch in stream_batches(flight_client(self._location(endpoint)).do_get(endpoint.ticket)):
                tally.add(batch)
        return tally.result(started, planned, endpoints=len(info.endpoints))

    def _location(self, endpoint: fl.FlightEndpoint) -> str:
        if not endpoint.locations:
            return self.address
        uri = endpoint.locations[0].uri
        uri = uri.decode() if isinstance(uri, bytes) else str(uri)
        return self.address if uri.startswith("arrow-flight-reuse-connection") else uri

    def close(self) -> None:
        pass


@dataclass
class ParquetRead:
    """The given Parquet files decoded into Arrow with ``pyarrow.dataset``, as a trainer without
    a cache reads them."""

    paths: List[str]

    def prepare(self) -> None:
        self._dataset = pads.dataset(self.paths, format="parquet") if self.paths else None

    def run(self) -> Dict[str, Any]:
        tally = Tally()
        started = now()
        if self._dataset is not None:
            for batch in self._dataset.to_batches(batch_size=BATCH_ROWS):
                tally.add(batch)
        return tally.result(started, None, endpoints=len(self.paths))

    def close(self) -> None:
        self._dataset = None


@dataclass
class JobEpochRead:
    """One whole epoch of a training job as its only rank, through the Floe client."""

    address: str
    job: str
    shuffle: bool
    epoch: int

    def _spec(self):
        from floe_client import JobSpec

        return JobSpec(self.job, DATASET, batch_rows=JOB_BATCH_ROWS, seed=JOB_SEED, shuffle=self.shuffle)

    def prepare(self) -> None:
        from floe_client import FloeClient

        self._client = FloeClient(self.address)
        self._client.register_job_spec(self._spec())  # idempotent; connects before the signal

    def run(self) -> Dict[str, Any]:
        tally = Tally()
        started = now()
        for _, batch in self._client.read_job(self._spec(), self.epoch, world_size=1, rank=0):
            tally.add(batch)
        return tally.result(started, started)

    def close(self) -> None:
        self._client.close()


def _reader_main(index: int, tasks: "mp.Queue", results: "mp.Queue", go: "mp.Event") -> None:
    """A reader process: prepares each read it is given, says so, waits for the common start
    signal, reads, and answers what it counted."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the benchmark process stops its readers
    while True:
        task = tasks.get()
        if task is None:
            return
        ready = False
        try:
            task.prepare()
            results.put((index, "ready", None))
            ready = True
            go.wait()
            results.put((index, "done", task.run()))
        except BaseException:  # handed to the benchmark process, which stops the run
            results.put((index, "error" if ready else "failed", traceback.format_exc()))
        finally:
            with contextlib.suppress(Exception):
                task.close()


class ReaderPool:
    """Reader processes (spawned once, reused for every read), started together for each read."""

    def __init__(self, size: int):
        context = mp.get_context("spawn")
        self._results = context.Queue()
        self._go = context.Event()
        self._tasks = [context.Queue() for _ in range(size)]
        self._processes = [
            context.Process(
                target=_reader_main, args=(i, self._tasks[i], self._results, self._go),
                name=f"bench-reader-{i}", daemon=True,
            )
            for i in range(size)
        ]
        for process in self._processes:
            process.start()

    @property
    def size(self) -> int:
        return len(self._processes)

    def run(self, tasks: Sequence[Any]) -> List[Dict[str, Any]]:
        """Runs ``tasks[j]`` in reader process j, all starting on one signal; answers each
        reader's tally, in order."""
        if len(tasks) > self.size:
            raise ValueError(f"{len(tasks)} reads for {self.size} reader processes")
        deadline = time.monotonic() + READ_TIMEOUT
        for j, task in enumerate(tasks):
            self._tasks[j].put(task)
        answers: Dict[int, Any] = {}
        errors: List[str] = []
        ready = set()
        while len(ready) + len(errors) < len(tasks):  # every reader prepared (or failed to)
            index, kind, value = self._next(deadline)
            if kind == "ready":
                ready.add(index)
            else:
                errors.append(value)
        self._go.set()
        try:
            while len(answers) < len(ready):
                index, kind, value = self._next(deadline)
                if kind == "done":
                    answers[index] = value
                else:
                    errors.append(value)
                    answers[index] = None
        finally:
            self._go.clear()
        if errors:
            raise RuntimeError(f"A reader failed:\n{errors[0]}")
        return [answers[j] for j in range(len(tasks))]

    def _next(self, deadline: float):
        while True:
            try:
                return self._results.get(timeout=1.0)
            except queue.Empty:
                dead = [p.name for p in self._processes if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"Reader process(es) {', '.join(dead)} died") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"A read took longer than {READ_TIMEOUT:.0f} s") from None

    def close(self) -> None:
        for tasks in self._tasks:
            with contextlib.suppress(Exception):
                tasks.put(None)
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)


# -- the servers ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid: int) -> int:
    """The process's resident set (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"No VmRSS for process {pid}")


class FloeNode:
    """``./floe node`` as a process of its own on 127.0.0.1, stopped by its PID (the launcher
    execs the JVM, so the PID is the JVM's)."""

    def __init__(
        self,
        log: Path,
        memory_limit: str,
        slice_target_size: Optional[int] = None,
        *,
        remote_port: int = 0,
        java_options: Sequence[str] = (),
        command: Optional[Sequence[str]] = None,
    ):
        self.port = free_port()
        self.address = f"grpc+tcp://127.0.0.1:{self.port}"
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            FLOE_FLIGHT_PORT=str(self.port),
            FLOE_FLIGHT_BIND_HOST="127.0.0.1",
            FLOE_FLIGHT_ADVERTISED_HOST="127.0.0.1",
            FLOE_MANAGEMENT_ENABLED="false",
            FLOE_AUTH_ANONYMOUS="operator",  # local readers on 127.0.0.1 need no token
            FLOE_ALLOWED_LOCATIONS="*",  # the benchmark's table in a local directory
            FLOE_MEMORY_LIMIT=memory_limit,
            FLOE_REMOTE_HOST="127.0.0.1",
            FLOE_REMOTE_BIND_HOST="127.0.0.1",
            FLOE_REMOTE_PORT=str(remote_port),
            AWS_EC2_METADATA_DISABLED="true",  # local tables only: never ask the metadata address
        )
        if slice_target_size is not None:
            env["FLOE_SLICE_TARGET_SIZE"] = f"{slice_target_size}B"
        if java_options:  # the launcher puts JAVA_OPTS last, so these win
            env["JAVA_OPTS"] = " ".join(java_options)
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log, "wb")
        self.started = now()
        # ``command`` (default ``./floe node``) must exec the JVM, so that its PID is the node's.
        self.process = subprocess.Popen(
            list(command) if command else [str(ROOT / "floe"), "node"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_serving(self) -> float:
        """Seconds from the process start until the node answers ``list``."""
        deadline = time.monotonic() + NODE_START_TIMEOUT
        while not self._accepts_connections():
            self._check_alive(deadline)
            time.sleep(0.02)
        while True:
            # A fresh channel for every try, so that gRPC's reconnect backoff adds nothing.
            client = fl.connect(self.address, generic_options=[("grpc.use_local_subchannel_pool", 1)])
            try:
                list(client.do_action(fl.Action("list", b""), options=fl.FlightCallOptions(timeout=5)))
                return now() - self.started
            except pa.ArrowException:
                self._check_alive(deadline)
                time.sleep(0.02)
            finally:
                client.close()

    def _accepts_connections(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def _check_alive(self, deadline: float) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"The Floe node exited with {self.process.returncode}:\n{self.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"The Floe node did not serve within {NODE_START_TIMEOUT:.0f} s:\n{self.tail()}")

    def built_on_start(self) -> bool:
        """True when the launcher ran Maven or trained the node's class archive (bin/floe-cds)
        before starting the JVM (then the start time is not the node's)."""
        head = self.log.read_text(errors="replace")[:4000]
        return "building Floe" in head or "training the node's class-data-sharing archive" in head

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 30 s, to the process group this node started."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        self._log.close()


class ArrowTableServer(fl.FlightServerBase):
    """Arrow's C++ Flight server (through pyarrow) holding a table as record batches of
    ``BATCH_ROWS`` rows, each in one buffer of its own, answering Floe's shard descriptors: shard
    j of k is the contiguous rows ``[N*j//k, N*(j+1)//k)``, served by one endpoint."""

    def __init__(self, batches: List[pa.RecordBatch], schema: pa.Schema):
        super().__init__("grpc+tcp://127.0.0.1:0")
        self._table = pa.Table.from_batches(batches, schema)
        self._location = fl.Location.for_grpc_tcp("127.0.0.1", self.port)

    def _info(self, descriptor: fl.FlightDescriptor, index: int, count: int) -> fl.FlightInfo:
        rows = self._table.num_rows
        first, stop = rows * index // count, rows * (index + 1) // count
        ticket = json.dumps({"from": first, "to": stop}).encode()
        part = self._table.slice(first, stop - first)
        return fl.FlightInfo(
            self._table.schema, descriptor, [fl.FlightEndpoint(ticket, [self._location])], part.num_rows, part.nbytes
        )

    def get_flight_info(self, context, descriptor):
        if descriptor.descriptor_type != fl.DescriptorType.CMD:
            return self._info(descriptor, 0, 1)
        command = json.loads(descriptor.command)
        index, count = int(command.get("shard_index", 0)), int(command.get("shard_count", 1))
        if not 0 <= index < count:
            raise fl.FlightServerError(f"shard {index} of {count}")
        return self._info(descriptor, index, count)

    def list_flights(self, context, criteria):
        yield self._info(fl.FlightDescriptor.for_path(ARROW_DATASET), 0, 1)

    def do_get(self, context, ticket):
        span = json.loads(ticket.ticket)
        return fl.RecordBatchStream(self._table.slice(span["from"], span["to"] - span["from"]))


def packed_batches(paths: Sequence[str]) -> List[pa.RecordBatch]:
    """The files' rows as record batches of ``BATCH_ROWS`` rows, each batch in one buffer."""
    table = pads.dataset(list(paths), format="parquet").to_table().combine_chunks()
    return [pa.ipc.read_record_batch(b.serialize(), table.schema) for b in table.to_batches(max_chunksize=BATCH_ROWS)]


def _arrow_server_main(paths: List[str], ports: "mp.Queue") -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the benchmark process stops it
    batches = packed_batches(paths)
    server = ArrowTableServer(batches, batches[0].schema)
    ports.put((server.port, sum(b.nbytes for b in batches)))
    server.serve()


class ArrowServerProcess:
    """The Arrow C++ Flight server in a process of its own, stopped by its PID."""

    def __init__(self, paths: Sequence[str]):
        context = mp.get_context("spawn")
        ports = context.Queue()
        self.process = context.Process(
            target=_arrow_server_main, args=(list(paths), ports), name="bench-arrow-server", daemon=True
        )
        self.process.start()
        deadline = time.monotonic() + 600
        while True:
            try:
                port, self.bytes = ports.get(timeout=1.0)
                break
            except queue.Empty:
                if not self.process.is_alive() or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("The Arrow C++ Flight server did not start") from None
        self.address = f"grpc+tcp://127.0.0.1:{port}"

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()  # SIGTERM
            self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=10)


# -- figures -------------------------------------------------------------------------------------


@dataclass
class Read:
    """One measured read of one contender: all its reader processes together."""

    bytes: int
    rows: int
    seconds: float  # from the first reader's start to the last reader's end
    readers: int
    batches: int
    empty_batches: int
    endpoints: int
    plan_ms: Optional[float]  # reader 0's GetFlightInfo
    first_batch_ms: Optional[float]  # reader 0: end of GetFlightInfo to its first batch

    @property
    def mb_s(self) -> float:
        return self.bytes / MB / self.seconds

    @property
    def rows_s(self) -> float:
        return self.rows / self.seconds

    @staticmethod
    def of(tallies: List[Dict[str, Any]]) -> "Read":
        first = tallies[0]

        def ms(value):
            return None if value is None else value * 1000.0

        return Read(
            bytes=sum(t["bytes"] for t in tallies),
            rows=sum(t["rows"] for t in tallies),
            seconds=max(t["ended"] for t in tallies) - min(t["started"] for t in tallies),
            readers=len(tallies),
            batches=sum(t["batches"] for t in tallies),
            empty_batches=sum(t["empty_batches"] for t in tallies),
            endpoints=sum(t["endpoints"] for t in tallies if "endpoints" in t),
            plan_ms=ms(first["plan_seconds"]),
            first_batch_ms=ms(first["first_batch_seconds"]),
        )

    def to_json(self) -> Dict[str, Any]:
        return {**asdict(self), "mb_s": self.mb_s, "rows_s": self.rows_s}


@dataclass
class Series:
    """Every round's read of one contender."""

    key: str
    label: str
    reads: List[Read] = field(default_factory=list)

    def best(self, value: Callable[[Read], float] = lambda r: r.mb_s) -> float:
        return max(value(r) for r in self.reads)

    def median(self, value: Callable[[Read], float] = lambda r: r.mb_s) -> float:
        return statistics.median(value(r) for r in self.reads)

    def median_of(self, value: Callable[[Read], Optional[float]]) -> Optional[float]:
        values = [v for v in (value(r) for r in self.reads) if v is not None]
        return statistics.median(values) if values else None

    def to_json(self) -> Dict[str, Any]:
        summary = {"best_mb_s": self.best(), "median_mb_s": self.median()} if self.reads else {}
        return {"label": self.label, **summary, "reads": [r.to_json() for r in self.reads]}


@dataclass
class Contender:
    key: str
    label: str
    tasks: Callable[[int], List[Any]]  # n-th read of this contender -> one read per reader process


def shard_reads(address: str, dataset: str, k: int) -> List[ShardRead]:
    return [ShardRead(address, dataset, j, k) for j in range(k)]


def contenders(floe: str, arrow: str, table: BenchTable, reader_counts: Sequence[int]) -> List[Contender]:
    """Every contender of a round, in the order they take turns."""
    result = []
    for k in reader_counts:
        files = table.paths
        shares = [files[len(files) * j // k : len(files) * (j + 1) // k] for j in range(k)]
        readers = "1 reader" if k == 1 else f"{k} readers"
        processes = "1 process" if k == 1 else f"{k} processes"
        result += [
            Contender(f"floe-{k}", f"Floe, {readers}", lambda n, k=k: shard_reads(floe, DATASET, k)),
            Contender(f"direct-{k}", f"direct decode, {processes}", lambda n, s=shares: [ParquetRead(p) for p in s]),
            Contender(f"arrow-{k}", f"Arrow C++ Flight server, {readers}",
                      lambda n, k=k: shard_reads(arrow, ARROW_DATASET, k)),
        ]
    # Every read of a job is a new epoch: its own order, bound to the dataset's layout.
    result += [
        Contender("job-shuffled", f"{JOB_LABEL}, shuffled {JOB_READ}",
                  lambda n: [JobEpochRead(floe, SHUFFLED_JOB, True, n)]),
        Contender("job-ordered", f"{JOB_LABEL}, no shuffle {JOB_READ}",
                  lambda n: [JobEpochRead(floe, ORDERED_JOB, False, n)]),
    ]
    return result


def memory_limit_for(table: BenchTable) -> str:
    """Generous: four times the Arrow bytes, at least 2 GiB."""
    return f"{max(2048, math.ceil(4 * table.arrow_bytes / MIB))}MiB"


def floe_client(address: str):
    from floe_client import FloeClient

    return FloeClient(address)


def start_node(log: Path, table: BenchTable, slice_target_size: Optional[int] = None, **node_options):
    """Starts a node and loads the table; answers (node, facts about its start and load).
    ``node_options`` go to :class:`FloeNode`."""
    node = FloeNode(log, memory_limit_for(table), slice_target_size, **node_options)
    try:
        serving = node.wait_serving()
        with floe_client(node.address) as client:
            started = now()
            status = client.load(DATASET, table.metadata_location, wait=True)
            load_seconds = now() - started
        if status.get("state") != "READY":
            raise RuntimeError(f"The load ended {status.get('state')}: {status}")
        facts = dict(
            start_to_serving_s=serving, start_included_build=node.built_on_start(), load_s=load_seconds,
            load_rows_s=status["rows"] / load_seconds, status=status, rss_after_load=rss_bytes(node.pid),
        )
        return node, facts
    except BaseException:
        node.stop()
        raise


def register_jobs(address: str) -> None:
    with floe_client(address) as client:
        for job, shuffle in ((SHUFFLED_JOB, True), (ORDERED_JOB, False)):
            client.register_job(job, DATASET, JOB_BATCH_ROWS, seed=JOB_SEED, shuffle=shuffle)


# -- the main run --------------------------------------------------------------------------------


def run_rounds(pool: ReaderPool, order: List[Contender], rounds: int, reads: int) -> Dict[str, Series]:
    """A warm-up read of every contender (not kept), then ``rounds`` rounds in which every
    contender in turn makes ``reads`` reads."""
    series = {c.key: Series(c.key, c.label) for c in order}
    done = {c.key: 0 for c in order}

    def read(contender: Contender) -> Read:
        result = Read.of(pool.run(contender.tasks(done[contender.key])))
        done[contender.key] += 1
        return result

    for contender in order:
        print(f"  warm-up    {contender.label:<46} {read(contender).mb_s:8.0f} MB/s", flush=True)
    for r in range(rounds):
        for contender in order:
            taken = [read(contender) for _ in range(reads)]
            series[contender.key].reads.extend(taken)
            figures = ", ".join(f"{t.mb_s:,.0f}" for t in taken)
            print(f"  round {r + 1}/{rounds}  {contender.label:<46} {figures} MB/s", flush=True)
    return series


def measure(args, pool: ReaderPool, table: BenchTable, log_dir: Path) -> Dict[str, Any]:
    """The main comparison: one node, the Arrow C++ server, direct decode, jobs."""
    results: Dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        print("starting the Arrow C++ Flight server (loads the table into memory) ...", flush=True)
        arrow = ArrowServerProcess(table.paths)
        stack.callback(arrow.stop)
        results["arrow_server_bytes"] = arrow.bytes
        print("starting ./floe node and loading the table ...", flush=True)
        node, facts = start_node(log_dir / "node.log", table)
        stack.callback(node.stop)
        results["node"] = facts
        print(f"  start → serving {facts['start_to_serving_s']:.2f} s; load {facts['load_s']:.2f} s "
              f"({facts['status'].get('slices_total')} slices, {facts['status']['bytes']:,} bytes)", flush=True)

        first = Read.of(pool.run([ShardRead(node.address, DATASET, 0, 1)]))
        results["first_read"] = first
        print(f"  first read after the load: {first.mb_s:.0f} MB/s", flush=True)
        register_jobs(node.address)

        order = contenders(node.address, arrow.address, table, args.readers)
        results["series"] = run_rounds(pool, order, args.rounds, args.reads)
        results["node"]["rss_after_reads"] = rss_bytes(node.pid)
        results["node"]["epochs_read"] = 1 + (1 + args.rounds * args.reads) * sum(
            1 for c in order if c.key.startswith(("floe-", "job-"))
        )
        results["node"]["final_status"] = floe_client_status(node.address)
    return results


def floe_client_status(address: str) -> Dict[str, Any]:
    with floe_client(address) as client:
        return client.status(DATASET)


# -- the slice-count sweep -----------------------------------------------------------------------


def slices_for(table: BenchTable, target: int) -> int:
    """How many slices Floe's planner cuts at ``target`` bytes: runs of row groups, never across
    files of different commits (each file here is its own commit)."""
    count = 0
    for f in table.files:
        run = 0
        for length in f.row_group_lengths:
            if run and run + length > target:
                count += 1
                run = 0
            run += length
        count += 1 if run else 0
    return count


def slice_target_for(table: BenchTable, wanted: int) -> int:
    """The slice target size whose slice count is nearest ``wanted``."""
    low, high = 1, max(f.bytes for f in table.files) * 2
    while low < high:  # the smallest target with at most `wanted` slices
        middle = (low + high) // 2
        if slices_for(table, middle) <= wanted:
            high = middle
        else:
            low = middle + 1
    candidates = [t for t in (low, low - 1) if t >= 1]
    return min(candidates, key=lambda t: abs(math.log(slices_for(table, t) / wanted)))


def plan_ms(address: str, times: int = 5) -> Tuple[float, int, int]:
    """Warm whole-dataset GetFlightInfo: median ms, endpoints, answer bytes."""
    client = fl.connect(address)
    try:
        descriptor = fl.FlightDescriptor.for_command(json.dumps({"dataset": DATASET}))
        info = client.get_flight_info(descriptor)
        samples = []
        for _ in range(times):
            started = now()
            info = client.get_flight_info(descriptor)
            samples.append((now() - started) * 1000.0)
        return statistics.median(samples), len(info.endpoints), len(info.serialize())
    finally:
        client.close()


def job_wire(address: str, epoch: int, batches: int = 32) -> Dict[str, Any]:
    """What the first ``batches`` global batches of a shuffled job epoch put on the wire (one
    plan, as the Python client plans a chunk), read with plain pyarrow.flight: endpoints, record
    batches, empty record batches, plan bytes."""
    with floe_client(address) as floe:
        batches = min(batches, int(floe.job_status(SHUFFLED_JOB, epoch)["batches_per_epoch"]))
    client = fl.connect(address)
    try:
        command = {"job": SHUFFLED_JOB, "epoch": epoch, "world_size": 1, "rank": 0,
                   "batch_from": 0, "batch_to": batches}
        info = client.get_flight_info(fl.FlightDescriptor.for_command(json.dumps(command)))
        tally = Tally()
        for endpoint in info.endpoints:
            for batch in stream_batches(client.do_get(endpoint.ticket)):
                tally.add(batch)
        return dict(global_batches=batches, endpoints=len(info.endpoints), plan_bytes=len(info.serialize()),
                    record_batches=tally.batches, empty_record_batches=tally.empty_batches)
    finally:
        client.close()


def sweep(args, pool: ReaderPool, base: Path, log_dir: Path) -> List[Dict[str, Any]]:
    """The same rows cut into about 8, 100, 1,000 and 2,000 slices, one node start each."""
    table = ensure_table(base, args.rows, max(1, args.rows // SWEEP_ROW_GROUPS))
    rows = []
    for wanted in SWEEP_SLICES:
        target = slice_target_for(table, wanted)
        print(f"sweep: ~{wanted} slices (FLOE_SLICE_TARGET_SIZE={target}B) ...", flush=True)
        node, facts = start_node(log_dir / f"node-sweep-{wanted}.log", table, target)
        try:
            register_jobs(node.address)
            plan, endpoints, plan_bytes = plan_ms(node.address)
            plain = Series("plain", "Floe, 1 reader")
            job = Series("job", "shuffled job")
            pool.run([ShardRead(node.address, DATASET, 0, 1)])  # warm-up
            for n in range(args.rounds * args.reads):
                plain.reads.append(Read.of(pool.run([ShardRead(node.address, DATASET, 0, 1)])))
                job.reads.append(Read.of(pool.run([JobEpochRead(node.address, SHUFFLED_JOB, True, n)])))
            wire = job_wire(node.address, args.rounds * args.reads)
            row = dict(
                wanted=wanted, slice_target_bytes=target, slices=facts["status"].get("slices_total"),
                bytes=facts["status"]["bytes"], load_s=facts["load_s"], plan_ms=plan, endpoints=endpoints,
                plan_bytes=plan_bytes, plain=plain.to_json(), job=job.to_json(), job_wire=wire,
                rss_after_load=facts["rss_after_load"], rss=rss_bytes(node.pid),
            )
        finally:
            node.stop()
        rows.append(row)
        print(f"  {row['slices']} slices: {row['bytes']:,} bytes, plan {plan:.1f} ms ({endpoints} endpoints), "
              f"1 reader {plain.best():.0f} MB/s, shuffled job {job.best():.0f} MB/s, "
              f"{wire['empty_record_batches']} of {wire['record_batches']} job record batches empty", flush=True)
    base_row = rows[0]
    for row in rows:
        row["held_vs_8_slices"] = row["bytes"] / base_row["bytes"]
        row["plain_vs_8_slices"] = row["plain"]["best_mb_s"] / base_row["plain"]["best_mb_s"]
        row["job_vs_8_slices"] = row["job"]["best_mb_s"] / base_row["job"]["best_mb_s"]
    return rows


# -- the report ----------------------------------------------------------------------------------


def machine_info() -> Dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    model = next((x.split(":", 1)[1].strip() for x in cpuinfo.splitlines() if x.startswith("model name")), "?")
    meminfo = Path("/proc/meminfo").read_text()
    mem_kib = int(next(x.split()[1] for x in meminfo.splitlines() if x.startswith("MemTotal:")))
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60).stderr.splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        java = "none found"
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    commit = git.stdout.strip()
    import pyiceberg

    return dict(
        cores=os.cpu_count(), model=model, memory_gib=round(mem_kib / 1024 / 1024, 1), java=java,
        python=platform.python_version(), pyarrow=pa.__version__, pyiceberg=pyiceberg.__version__,
        load_average=os.getloadavg(), commit=commit, java_opts=os.environ.get("JAVA_OPTS", "launcher default"),
        floe_env={k: v for k, v in os.environ.items() if k.startswith("FLOE_")},
    )


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or not b else a / b


def _x(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f}×"


@dataclass
class Line:
    """One printed figure: its best and median, and its ratios to its baselines."""

    label: str
    best: float
    median: Optional[float]
    unit: str
    versus: List[tuple] = field(default_factory=list)  # (baseline label, ratio best, ratio median)


def figure_lines(results: Dict[str, Any], args) -> List[Line]:
    series: Dict[str, Series] = results["series"]
    lines = []

    def line(key, *baselines):
        s = series[key]
        versus = [(series[b].label, ratio(s.best(), series[b].best()), ratio(s.median(), series[b].median()))
                  for b in baselines if b in series]
        lines.append(Line(s.label, s.best(), s.median(), "MB/s", versus))

    for k in args.readers:
        line(f"floe-{k}", f"direct-{k}", f"arrow-{k}")
        line(f"arrow-{k}", f"direct-{k}")
        line(f"direct-{k}")
    line("job-shuffled", "floe-1")
    line("job-ordered", "floe-1")
    if "floe-1" in series:
        first = results["first_read"]
        lines.append(Line("Floe, first read after the load (1 reader)", first.mb_s, None, "MB/s",
                          [("Floe, 1 reader (later rounds)", ratio(first.mb_s, series["floe-1"].best()),
                            ratio(first.mb_s, series["floe-1"].median()))]))
    node = results["node"]
    load_rows_s = node["load_rows_s"]
    if "direct-1" in series:
        direct = series["direct-1"]
        lines.append(Line("Floe load, rows/s (one node)", load_rows_s, None, "rows/s",
                          [("direct decode rows/s, 1 process", ratio(load_rows_s, direct.best(lambda r: r.rows_s)),
                            ratio(load_rows_s, direct.median(lambda r: r.rows_s)))]))
    lines.append(Line("Floe load, seconds", node["load_s"], None, "s"))
    lines.append(Line("Floe start → serving", node["start_to_serving_s"], None, "s"))
    for key in ("floe-1", "arrow-1"):
        if key in series:
            s = series[key]
            lines.append(Line(f"{s.label}: first batch after GetFlightInfo", min(r.first_batch_ms for r in s.reads),
                              s.median_of(lambda r: r.first_batch_ms), "ms"))
            lines.append(Line(f"{s.label}: GetFlightInfo", min(r.plan_ms for r in s.reads),
                              s.median_of(lambda r: r.plan_ms), "ms"))
    held = node["status"]["bytes"]
    for when in ("rss_after_load", "rss_after_reads"):
        rss = node[when]
        lines.append(Line(f"node RSS {when[4:].replace('_', ' ')} (MiB)", rss / MIB, None, "MiB",
                          [("Arrow bytes held", rss / held, None)]))
    return lines


def _fmt(value: Optional[float], unit: str) -> str:
    if value is None:
        return "–"
    if unit == "rows/s":
        return f"{value / 1e6:.2f} M rows/s"
    if unit in ("s",):
        return f"{value:.2f} s"
    if unit == "ms":
        return f"{value:.1f} ms"
    return f"{value:,.0f} {unit}"


def print_figures(lines: List[Line]) -> None:
    print(f"\n{'figure':<58} {'best':>16} {'median':>16}   {'baseline':<40} {'ratio best':>10} {'median':>8}")
    for line in lines:
        head = f"{line.label:<58} {_fmt(line.best, line.unit):>16} {_fmt(line.median, line.unit):>16}"
        if not line.versus:
            print(head)
        for n, (baseline, best, median) in enumerate(line.versus):
            prefix = head if n == 0 else " " * len(head)
            print(f"{prefix}   {baseline:<40} {_x(best):>10} {_x(median):>8}")


@dataclass
class Target:
    code: str
    text: str
    figure: str
    met: Optional[bool]  # None: not measured in this run

    @property
    def verdict(self) -> str:
        return "not measured" if self.met is None else ("met" if self.met else "NOT MET")


def targets(results: Dict[str, Any], args) -> List[Target]:
    series: Dict[str, Series] = results["series"]
    node = results["node"]
    held = node["status"]["bytes"]

    def best_ratio(a, b):
        return ratio(series[a].best(), series[b].best()) if a in series and b in series else None

    found = []
    direct_1, arrow_1 = best_ratio("floe-1", "direct-1"), best_ratio("floe-1", "arrow-1")
    found.append(Target("a", "1 reader ≥ 1.0× direct decode (1 process) and ≥ 0.9× Arrow C++ server",
                        f"{_x(direct_1)} direct, {_x(arrow_1)} Arrow C++",
                        None if direct_1 is None or arrow_1 is None else direct_1 >= 1.0 and arrow_1 >= 0.9))
    four = best_ratio("floe-4", "direct-4")
    found.append(Target("b", "4 readers aggregate ≥ 2.5× 4 direct-decode processes",
                        f"{_x(four)} ({_x(best_ratio('floe-4', 'arrow-4'))} Arrow C++)",
                        None if four is None else four >= 2.5))
    load = None
    if "direct-1" in series:
        load = ratio(node["load_rows_s"], series["direct-1"].best(lambda r: r.rows_s))
    found.append(Target("c", "load rows/s ≥ 0.6× pyarrow.dataset decode rows/s (1 process)", _x(load),
                        None if load is None else load >= 0.6))
    job = best_ratio("job-shuffled", "floe-1")
    found.append(Target("d", "shuffled job epoch ≥ 0.8× the plain stream of the same rows", _x(job),
                        None if job is None else job >= 0.8))
    over = [(node[w] - 1.15 * held) / MIB for w in ("rss_after_load", "rss_after_reads")]
    found.append(Target("e", "node RSS ≤ 1.15 × Arrow bytes + 300 MiB (after load; after reads)",
                        f"RSS − 1.15×bytes = {over[0]:+,.0f} / {over[1]:+,.0f} MiB "
                        f"({node['epochs_read']} epochs read)", max(over) <= 300))
    first_batch = series["floe-1"].median_of(lambda r: r.first_batch_ms) if "floe-1" in series else None
    start = node["start_to_serving_s"]
    found.append(Target("f", "start → serving ≤ 2.5 s; first batch ≤ 20 ms after GetFlightInfo",
                        f"{start:.2f} s; {_fmt(first_batch, 'ms')} (median)"
                        + (" [start included a Maven build]" if node["start_included_build"] else ""),
                        None if first_batch is None else start <= 2.5 and first_batch <= 20.0))
    first_epoch = ratio(results["first_read"].mb_s, series["floe-1"].median()) if "floe-1" in series else None
    found.append(Target("g", "first epoch after a load within 10 % of the later ones",
                        f"{_x(first_epoch)} of the later median", None if first_epoch is None else first_epoch >= 0.9))
    found.append(sweep_target(results.get("sweep")))
    return found


def sweep_target(rows: Optional[List[Dict[str, Any]]]) -> Target:
    text = ("at ~2,000 slices: held ≤ 1.05× data, reads ≥ 0.8× of 8 slices, plans not listing every slice, "
            "no empty batches")
    if not rows:
        return Target("h", text, "run with --slices-sweep", None)
    last = rows[-1]
    wire = last["job_wire"]
    met = (
        last["held_vs_8_slices"] <= 1.05
        and last["plain_vs_8_slices"] >= 0.8
        and last["job_vs_8_slices"] >= 0.8
        and last["endpoints"] < last["slices"]
        and wire["empty_record_batches"] == 0
    )
    figure = (f"{last['slices']} slices: held {last['held_vs_8_slices']:.2f}×, plain {last['plain_vs_8_slices']:.2f}×, "
              f"job {last['job_vs_8_slices']:.2f}×, plan lists {last['endpoints']} endpoints, "
              f"{wire['empty_record_batches']}/{wire['record_batches']} job batches empty")
    return Target("h", text, figure, met)


def print_targets(found: List[Target]) -> None:
    print("\nissue 10 targets (one node, ratio of the bests):")
    for t in found:
        print(f"  ({t.code}) {t.text:<100} {t.figure:<52} {t.verdict}")


def print_sweep(rows: List[Dict[str, Any]]) -> None:
    print(f"\nslice sweep: {'slices':>7} {'target':>10} {'load':>7} {'held ÷ 8':>9} {'RSS load/reads':>15} {'plan':>9} "
          f"{'endpoints':>9} {'rows/batch':>10} {'1 reader':>10} {'÷ 8':>6} {'shuffled job':>13} {'÷ 8':>6} "
          f"{'job batches empty':>18}")
    for row in rows:
        wire = row["job_wire"]
        read = row["plain"]["reads"][0]
        print(f"{'':13}{row['slices']:>7} {row['slice_target_bytes'] / MIB:>8.2f}Mi {row['load_s']:>6.2f}s "
              f"{row['held_vs_8_slices']:>9.2f} {row['rss_after_load'] / MIB:>6.0f}/{row['rss'] / MIB:>5.0f}MiB "
              f"{row['plan_ms']:>7.1f}ms {row['endpoints']:>9} "
              f"{read['rows'] / max(1, read['batches']):>10,.0f} "
              f"{row['plain']['best_mb_s']:>5.0f} MB/s {row['plain_vs_8_slices']:>5.2f}× "
              f"{row['job']['best_mb_s']:>8.0f} MB/s {row['job_vs_8_slices']:>5.2f}× "
              f"{wire['empty_record_batches']:>8}/{wire['record_batches']}")


def print_header(machine: Dict[str, Any], table: BenchTable, args) -> None:
    print(f"Floe readers benchmark, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {machine['commit']}")
    print(f"machine: {machine['cores']} cores, {machine['model']}, {machine['memory_gib']} GiB; "
          f"load average {', '.join(f'{x:.2f}' for x in machine['load_average'])}")
    print(f"software: {machine['java']}; Python {machine['python']}, pyarrow {machine['pyarrow']}, "
          f"PyIceberg {machine['pyiceberg']}")
    extra = "".join(f", {k}={v}" for k, v in machine["floe_env"].items())
    print(f"node: ./floe node, JAVA_OPTS {machine['java_opts']}, FLOE_MEMORY_LIMIT={memory_limit_for(table)}{extra}")
    print(f"table: {table.rows:,} rows, {len(table.files)} Parquet files (ZSTD, {table.row_groups} row groups), "
          f"{table.parquet_bytes / MB:,.1f} MB Parquet, {table.arrow_bytes / MB:,.1f} MB Arrow as written")
    print(f"run: a warm-up read of each contender, then {args.rounds} rounds of {args.reads} reads per contender, "
          f"contenders taking turns; readers {','.join(map(str, args.readers))}; "
          f"MB/s = Arrow bytes received / wall time of the slowest reader\n", flush=True)


def write_json(path: Path, machine, table, args, results, lines, found) -> None:
    def plain(value):
        if isinstance(value, Read):
            return value.to_json()
        if isinstance(value, Series):
            return value.to_json()
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    document = dict(
        date=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        command="./floe bench-readers " + " ".join(sys.argv[1:]),
        machine=machine, table=asdict(table), rows=args.rows, rounds=args.rounds, reads=args.reads,
        readers=args.readers,
        results=plain(results),
        figures=[asdict(line) for line in lines],
        targets=[{**asdict(t), "verdict": t.verdict} for t in found],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, default=str))


def draw_chart(path: Path, results: Dict[str, Any], args, machine: Dict[str, Any]) -> None:
    """Throughput (best bars, median marks) beside the ratios against their targets, and the
    slice-count sweep when it ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep_rows = results.get("sweep")
    widths = [3, 2] + ([2] if sweep_rows else [])
    figure, axes = plt.subplots(1, len(widths), figsize=(19 if sweep_rows else 15, 6.5),
                                gridspec_kw={"width_ratios": widths})
    throughput_panel(axes[0], results, args)
    ratio_panel(axes[1], results)
    if sweep_rows:
        sweep_panel(axes[2], sweep_rows)
    figure.suptitle(
        f"./floe bench-readers --rows {args.rows} --rounds {args.rounds} --reads {args.reads}"
        f"{' --slices-sweep' if sweep_rows else ''}: {dt.date.today()}, {machine['cores']} cores "
        f"({machine['model']}), {machine['java']}, pyarrow {machine['pyarrow']}",
        fontsize=10,
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def throughput_panel(axis, results: Dict[str, Any], args) -> None:
    series: Dict[str, Series] = results["series"]
    keys = [key for k in args.readers for key in (f"floe-{k}", f"arrow-{k}", f"direct-{k}")]
    keys += ["job-shuffled", "job-ordered"]
    colours = {"floe": "#1f77b4", "arrow": "#ff7f0e", "direct": "#2ca02c", "job": "#9467bd"}
    labels = [series[k].label.replace(f" {JOB_READ}", "") for k in keys] + ["Floe, first read after load"]
    best = [series[k].best() for k in keys] + [results["first_read"].mb_s]
    median = [series[k].median() for k in keys] + [results["first_read"].mb_s]
    colour = [colours[k.split("-")[0]] for k in keys] + ["#8c564b"]
    ys = range(len(labels))
    axis.barh(ys, best, color=colour)
    axis.plot(median, ys, "k|", markersize=14)
    axis.set_yticks(list(ys), labels)
    axis.invert_yaxis()
    axis.set_xlabel("MB/s of Arrow data (best read; | = median)")
    axis.set_title("Throughput, readers in separate processes")
    for y, value in zip(ys, best):
        axis.text(value, y, f" {value:,.0f}", va="center", fontsize=8)


def ratio_panel(axis, results: Dict[str, Any]) -> None:
    s: Dict[str, Series] = results["series"]
    rows = []  # (label, ratio, target)
    if "floe-1" in s and "direct-1" in s:
        rows.append(("(a) Floe ÷ direct, 1 reader", s["floe-1"].best() / s["direct-1"].best(), 1.0))
    if "floe-1" in s and "arrow-1" in s:
        rows.append(("(a) Floe ÷ Arrow C++, 1 reader", s["floe-1"].best() / s["arrow-1"].best(), 0.9))
    if "floe-4" in s and "direct-4" in s:
        rows.append(("(b) Floe ÷ direct, 4 readers", s["floe-4"].best() / s["direct-4"].best(), 2.5))
    if "direct-1" in s:
        direct_rows_s = s["direct-1"].best(lambda r: r.rows_s)
        rows.append(("(c) load ÷ direct decode rows/s", results["node"]["load_rows_s"] / direct_rows_s, 0.6))
    if "floe-1" in s:
        rows.append(("(d) shuffled job ÷ plain stream", s["job-shuffled"].best() / s["floe-1"].best(), 0.8))
        rows.append(("(g) first read ÷ later reads", results["first_read"].mb_s / s["floe-1"].median(), 0.9))
    ys = range(len(rows))
    values = [r[1] for r in rows]
    axis.barh(ys, values, color=["#2ca02c" if r[1] >= r[2] else "#d62728" for r in rows])
    for y, (_, value, goal) in zip(ys, rows):
        axis.plot([goal, goal], [y - 0.4, y + 0.4], "k-", linewidth=2)
        axis.text(value, y, f" {value:.2f}×", va="center", fontsize=9)
    axis.set_xlim(0, max(values + [r[2] for r in rows]) * 1.2)
    axis.set_yticks(list(ys), [r[0] for r in rows])
    axis.invert_yaxis()
    axis.set_xlabel("ratio (bar) against the issue 10 target (black line)")
    axis.set_title("Ratios")


def sweep_panel(axis, rows: List[Dict[str, Any]]) -> None:
    xs = range(len(rows))
    plain = [row["plain"]["best_mb_s"] for row in rows]
    job = [row["job"]["best_mb_s"] for row in rows]
    axis.bar([x - 0.2 for x in xs], plain, width=0.4, color="#1f77b4", label="1 reader, whole dataset")
    axis.bar([x + 0.2 for x in xs], job, width=0.4, color="#9467bd", label="shuffled job epoch")
    for x, row in zip(xs, rows):
        axis.text(x, max(plain[x], job[x]), f"held\n{row['held_vs_8_slices']:.2f}×", ha="center", va="bottom",
                  fontsize=8)
    axis.set_xticks(list(xs), [f"{row['slices']:,}" for row in rows])
    axis.set_xlabel("slices of the same rows\n(held: Arrow bytes ÷ those at 8 slices)")
    axis.set_ylabel("MB/s (best read)")
    axis.set_ylim(0, max(plain + job) * 1.25)
    axis.legend(fontsize=8)
    axis.set_title("Cost by slice count")


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str]):
    parser = argparse.ArgumentParser(
        prog="./floe bench-readers",
        description="Floe read by Python processes with plain pyarrow.flight, beside direct Parquet decode and "
        "an Arrow C++ Flight server, in one run; prints ratios and issue 10's targets.",
    )
    parser.add_argument("--rows", type=int, default=4_000_000, help="rows of the table (default 4,000,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, contenders alternating in each (default 3)")
    parser.add_argument("--reads", type=int, default=3, help="reads per contender in each round (default 3)")
    parser.add_argument("--readers", default="1,4", help="reader process counts, comma-separated (default 1,4)")
    parser.add_argument("--slices-sweep", action="store_true", help="also load the rows as ~8/100/1,000/2,000 slices")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-readers",
                        help="where the table, node logs and the JSON figures go (default data/bench-readers)")
    parser.add_argument("--chart", type=Path, default=ROOT / "docs" / "benchmarks-readers.png",
                        help="the PNG chart (default docs/benchmarks-readers.png)")
    args = parser.parse_args(argv)
    try:
        args.readers = sorted({int(k) for k in args.readers.split(",") if k.strip()})
    except ValueError:
        parser.error(f"--readers takes counts like 1,4, not {args.readers!r}")
    if not args.readers or args.readers[0] < 1:
        parser.error("--readers: every count must be at least 1")
    if args.rows < FILES * 8192 or args.rounds < 1 or args.reads < 1:
        parser.error(f"--rows must be at least {FILES * 8192:,}, --rounds and --reads at least 1")
    args.out = args.out.resolve()
    return args


def check_build() -> None:
    missing = [p for p in ("tools/target/runtime-classpath.txt", "tools/target/classes", "cluster/target/classes",
                           "flight-gateway/target/classes", "actors/target/classes",
                           "loader/target/classes") if not (ROOT / p).exists()]
    if missing:
        raise SystemExit(f"bench-readers: the Java build is missing ({', '.join(missing)}): "
                         f"run `mvn -B -q -DskipTests package` at {ROOT} first (./floe bench-readers does)")


def _stop_on_sigterm() -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    check_build()
    _stop_on_sigterm()
    machine = machine_info()
    run_id = dt.datetime.now().strftime("%Y-%m-%dT%H%M%S")
    log_dir = args.out / "logs" / run_id
    table = ensure_table(args.out, args.rows)
    print_header(machine, table, args)

    pool = ReaderPool(max(args.readers))
    try:
        results = measure(args, pool, table, log_dir)
        if args.slices_sweep:
            results["sweep"] = sweep(args, pool, args.out, log_dir)
    finally:
        pool.close()

    lines = figure_lines(results, args)
    found = targets(results, args)
    print_figures(lines)
    if results.get("sweep"):
        print_sweep(results["sweep"])
    print_targets(found)
    json_path = args.out / f"readers-{run_id}.json"
    write_json(json_path, machine, table, args, results, lines, found)
    draw_chart(args.chart, results, args, machine)
    print(f"\nfigures: {json_path}\nchart:   {args.chart}\nnode logs: {log_dir}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("\nbench-readers: stopped; every process it started was stopped", file=sys.stderr)
        sys.exit(130)
