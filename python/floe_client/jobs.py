"""Training jobs: a reader's settings registered against a loaded dataset, and the readers of a
job's epochs (``docs/protocol.md``, "Training jobs").

A job fixes, per epoch, an order of the dataset's rows (a pure function of the dataset's layout,
the seed, the epoch and the shuffle settings) and cuts it into global batches of ``batch_rows``
rows. In deterministic mode rank ``r`` of ``W`` reads the ``r``-th ``batch_rows / W`` rows of
every global batch it asks for; in dynamic mode workers lease whole global batches from the server
and acknowledge them once trained on.

:class:`JobSpec` is the registration; :func:`read_epoch` assembles a rank's batches from the
endpoint streams of a job plan; :func:`read_dynamic` is the lease/read/ack loop. Both are used
through :meth:`floe_client.FloeClient.read_job` and :meth:`floe_client.FloeClient.read_dynamic`.

Memory: :func:`read_epoch` holds at most two chunks of batches (the one being consumed and the
next, fetched meanwhile); a chunk is ``chunk_batches`` batch indices, fewer when the rank's
batches are large (about :data:`CHUNK_ROWS_MAX` rows at most).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import os
import re
import socket
import struct
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as fl

from ._retry import backoff
from .errors import FloeError, JobNotFound, NotFound, Unavailable, is_retryable, translate
from .replies import Leased, Wait, ack_status, lease_reply

__all__ = ["JobSpec", "Lease", "MODES", "TAILS", "job_descriptor", "default_worker_name"]

LOG = logging.getLogger("floe_client.jobs")

MODES = ("deterministic", "dynamic")
TAILS = ("drop", "pad")
_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
#: A dataset name as the node checks it: like a job id, but starting with a letter or digit.
_DATASET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: Batch indices per plan unless the caller says otherwise. Every plan and its streams cost the
#: node CPU whatever their length (about 10 ms; 18-32 % of a shuffled epoch of 4,096-row batches
#: at 32 batches a plan, docs/benchmarks.md), so chunks are long.
CHUNK_BATCHES_DEFAULT = 128
#: A chunk holds at most about this many rows (never less than one batch), so that large batches
#: do not multiply into large prefetches.
CHUNK_ROWS_MAX = 1 << 19
#: The first chunks of an epoch grow by this factor from one batch up to the chunk size, so that
#: the loop starts at once and never waits for a whole long chunk while it has nothing to train on.
_CHUNK_GROWTH = 4
#: Endpoint streams of a chunk read at once.
STREAMS_DEFAULT = 8
#: A read asks the nodes for record batches of about this many rows (several global batches each
#: when a rank's share is smaller): every record batch costs the node and this client the same
#: whatever its size, and the plain stream's batches are this large (the load's default).
MESSAGE_ROWS = 1 << 15
#: The most global batches a record batch may carry (the node refuses more).
BATCHES_PER_MESSAGE_MAX = 1024

# Nodes a plan may be asked to avoid at once (the node's limit), and for how long a node a stream
# could not reach is avoided: past the few seconds the cluster takes to notice a death and move
# the node's slices, after which plans no longer place anything there.
AVOID_MAX = 16
AVOID_SECONDS = 30.0
#: Registrations in a row that may answer "unknown job" again before a read gives up.
_REREGISTER_MAX = 5


def _check_id(kind: str, value: str) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise ValueError(f"Invalid {kind} id: {_excerpt(value)} (1-128 of letters, digits, '.', '_', '-')")
    return value


def _check_dataset(value: str) -> str:
    if not isinstance(value, str) or not _DATASET.match(value):
        raise ValueError(
            f"Invalid dataset name: {_excerpt(value)} (1-128 of letters, digits, '.', '_', '-', "
            "starting with a letter or digit)"
        )
    return value


def _excerpt(value: Any) -> str:
    """A value as an error quotes it: whole up to 128 characters, else its ends and length (as the
    node quotes values, docs/protocol.md)."""
    text = repr(value)
    return text if len(text) <= 128 else f"{text[:64]}…{text[-64:]} ({len(text)} characters)"


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < low:
        raise ValueError(f"Invalid {name}: {value} (must be >= {low})")
    return value


@dataclass(frozen=True)
class JobSpec:
    """The settings of a training job, as registered (``register_job``). Immutable; refine with
    :func:`dataclasses.replace`. ``None`` fields are left to the server's defaults (and left out
    of the request), so two specs that differ only there may still name the same job."""

    job: str
    dataset: str
    batch_rows: int
    seed: int = 0
    shuffle: bool = True
    mode: str = "deterministic"
    columns: Optional[Tuple[str, ...]] = None
    tail: str = "drop"
    block_rows: Optional[int] = None
    window_blocks: Optional[int] = None
    run_rows: Optional[int] = None
    lease_timeout_ms: Optional[int] = None
    pin_layout: Optional[bool] = None

    def __post_init__(self) -> None:
        _check_id("job", self.job)
        _check_dataset(self.dataset)
        _check_int("batch_rows", self.batch_rows, 1)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"seed must be an integer, not {self.seed!r}")
        if not isinstance(self.shuffle, bool):
            raise TypeError(f"shuffle must be True or False, not {self.shuffle!r}")
        if self.mode not in MODES:
            raise ValueError(f"Invalid mode: {self.mode!r} (must be one of {', '.join(MODES)})")
        if self.tail not in TAILS:
            raise ValueError(f"Invalid tail: {self.tail!r} (must be one of {', '.join(TAILS)})")
        if self.columns is not None:
            if isinstance(self.columns, str):
                raise TypeError("columns must be a sequence of column names, not a string")
            object.__setattr__(self, "columns", tuple(str(c) for c in self.columns))
        if self.pin_layout is not None and not isinstance(self.pin_layout, bool):
            raise TypeError(f"pin_layout must be True or False, not {self.pin_layout!r}")
        for name in ("block_rows", "window_blocks", "run_rows", "lease_timeout_ms"):
            value = getattr(self, name)
            if value is not None:
                _check_int(name, value, 1)

    @staticmethod
    def from_status(status: Dict[str, Any]) -> "JobSpec":
        """The spec a job's status describes (the server's defaults filled in)."""
        names = {field.name for field in dataclasses.fields(JobSpec)}
        fields = {k: v for k, v in status.items() if k in names and v is not None}
        if not fields.get("columns"):  # the server lists no columns for "all of them"
            fields.pop("columns", None)
        return JobSpec(**fields)

    @property
    def dynamic(self) -> bool:
        return self.mode == "dynamic"

    def rows_per_rank(self, world_size: int) -> int:
        """Rows of one rank's share of a global batch; raises ValueError unless ``world_size``
        divides ``batch_rows`` (every rank must get the same number of rows)."""
        _check_int("world_size", world_size, 1)
        if self.batch_rows % world_size:
            raise ValueError(
                f"World size {world_size} does not divide batch_rows {self.batch_rows} of job "
                f"'{self.job}': each rank reads batch_rows / world_size rows of every global batch; "
                f"choose a batch_rows that is a multiple of the world size"
            )
        return self.batch_rows // world_size

    def to_json(self) -> Dict[str, Any]:
        """The ``register_job`` body: every field that is not ``None``."""
        body = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                body[field.name] = list(value) if field.name == "columns" else value
        return body


@dataclass(frozen=True)
class Lease:
    """A dynamic-mode lease: global batch ``batch`` of ``epoch`` handed to ``worker`` until it
    acknowledges it (or the lease times out). ``id`` is the server's lease id."""

    job: str
    epoch: int
    batch: int
    id: str
    worker: str
    rows: int


def default_worker_name(suffix: Optional[str] = None) -> str:
    """``host/pid-N[/suffix]``: a worker name that tells an operator where a lease went."""
    name = f"{socket.gethostname()}/pid-{os.getpid()}"
    return f"{name}/{suffix}" if suffix else name


def job_descriptor(
    spec: JobSpec,
    epoch: int,
    world_size: int,
    rank: int,
    batch_from: int,
    batch_to: int,
    batch_step: int,
    batches_per_message: int = 1,
    avoid: Sequence[str] = (),
) -> fl.FlightDescriptor:
    """The ``GetFlightInfo`` command of a deterministic read of ``spec``'s epoch; its streams send
    up to ``batches_per_message`` global batches in one record batch. ``avoid`` names nodes (their
    Flight locations) the reader could not reach: the plan reads each slice from another node
    holding a copy of it, where the dataset has one (``replicas``)."""
    command = {
        "kind": "job_read",
        "job": spec.job,
        "epoch": int(epoch),
        "world_size": int(world_size),
        "rank": int(rank),
        "batch_from": int(batch_from),
        "batch_to": int(batch_to),
        "batch_step": int(batch_step),
    }
    if batches_per_message != 1:
        command["batches_per_message"] = int(batches_per_message)
    if avoid:
        command["avoid"] = list(avoid)[:AVOID_MAX]
    return fl.FlightDescriptor.for_command(json.dumps(command))


def batches_per_message(rows_per_rank: int, batches: int) -> int:
    """Global batches per record batch for a read of ``batches`` batches of ``rows_per_rank`` rows
    each: about :data:`MESSAGE_ROWS` rows a record batch, one batch when a share is that large."""
    return max(1, min(batches, BATCHES_PER_MESSAGE_MAX, MESSAGE_ROWS // max(1, rows_per_rank)))


def _concat(parts: Sequence[pa.RecordBatch]) -> pa.RecordBatch:
    """One record batch of the parts' rows, in order (the parts share a schema)."""
    if len(parts) == 1:
        return parts[0]
    concat = getattr(pa, "concat_batches", None)  # pyarrow >= 19
    if concat is not None:
        return concat(parts)
    table = pa.Table.from_batches(parts).combine_chunks()
    return table.to_batches(max_chunksize=table.num_rows)[0]


# A job stream's record batch: the global batch index, the batch, and where its rows go in the
# rank's share (None: the whole share, in order).
_Part = Tuple[int, pa.RecordBatch, Optional[pa.Array]]


def _job_parts(chunk) -> List[_Part]:
    """A job stream's record batch cut into its global batches' parts by its metadata
    (docs/protocol.md, "Job reads"), little-endian: for one batch, its index (int64) and the places
    of its rows (int32 each, left out for the whole share); for several, ``-n`` (int64), the ``n``
    indices (int64 each), their rows (int32 each), then the places of all rows (left out when every
    part is its whole share). The parts are slices of the record batch: nothing is copied."""
    metadata = chunk.app_metadata
    size = 0 if metadata is None else metadata.size
    data = chunk.data
    if size < 8 or size % 4:
        raise FloeError(f"A job stream's record batch came with {size} bytes of metadata, not batch indices and places", code="PROTOCOL")
    first = int.from_bytes(metadata.slice(0, 8).to_pybytes(), "little", signed=True)
    if first >= 0:
        indices, rows, at = [first], [data.num_rows], 8
    else:
        n = -first
        if n > (size - 8) // 12:
            raise FloeError(f"A job stream's record batch claims {n} global batches in {size} bytes of metadata", code="PROTOCOL")
        header = metadata.slice(8, 12 * n).to_pybytes()
        indices = list(struct.unpack_from(f"<{n}q", header))
        rows = list(struct.unpack_from(f"<{n}i", header, 8 * n))
        at = 8 + 12 * n
        if any(r < 0 for r in rows) or any(b <= a for a, b in zip(indices, indices[1:])) or indices[0] < 0:
            raise FloeError(f"A job stream's record batch has batches {indices[:5]} of rows {rows[:5]}: not ascending or negative", code="PROTOCOL")
    if sum(rows) != data.num_rows:
        raise FloeError(f"A job stream's record batch of {data.num_rows} rows says its batches {indices[:5]} have {sum(rows)}", code="PROTOCOL")
    places = None
    if size > at:
        # A view of the metadata's bytes (Arrow's int32 is little-endian on every platform it runs on).
        places = pa.Array.from_buffers(pa.int32(), (size - at) // 4, [None, metadata.slice(at)])
        if len(places) != data.num_rows:
            raise FloeError(f"A job stream's part of batch {indices[0]} has {data.num_rows} rows and {len(places)} places", code="PROTOCOL")
    if len(indices) == 1:
        return [(indices[0], data, places)]
    parts, start = [], 0
    for index, n in zip(indices, rows):
        parts.append((index, data.slice(start, n), None if places is None else places.slice(start, n)))
        start += n
    return parts


def _placed(parts: Sequence[_Part], rows: int) -> Optional[pa.RecordBatch]:
    """The rank's share of one batch from its parts (one per node holding any of its rows), each
    row at its place; None when the places do not cover ``rows`` exactly once. One part with no
    places is the share itself (no copy)."""
    if len(parts) == 1 and parts[0][2] is None:
        return parts[0][1] if parts[0][1].num_rows == rows else None
    places = pa.concat_arrays(
        [p if p is not None else pa.array(range(b.num_rows), pa.int32()) for _, b, p in parts]
    )
    if len(places) != rows:
        return None
    if rows:
        low, high = pc.min_max(places).values()
        if low.as_py() != 0 or high.as_py() != rows - 1 or pc.count_distinct(places).as_py() != rows:
            return None  # a place given twice, another not at all
    # The row that goes to place i is the i-th when the rows are sorted by their places.
    return _concat([b for _, b, _ in parts]).take(pc.sort_indices(places))


class _Cancelled(Exception):
    """The read was closed (or a sibling stream failed) while this stream ran."""


class _Unreached(Unavailable):
    """A stream's node could not be reached (it died, or its connection broke): plans avoid it
    for a while, so the read moves to nodes holding copies of its slices at once."""

    def __init__(self, uri: str, error: FloeError):
        super().__init__(f"{uri}: {error.description}", cause=error.cause, floe_code=error.floe_code)
        self.uri = uri


class _Attempt:
    """The streams of one planned chunk: failing one cancels the others."""

    def __init__(self, cancelled: threading.Event):
        self.cancelled = cancelled
        self.aborted = threading.Event()
        self._readers: set = set()
        self._lock = threading.Lock()

    def stopped(self) -> bool:
        return self.aborted.is_set() or self.cancelled.is_set()

    def track(self, reader) -> None:
        with self._lock:
            self._readers.add(reader)
        if self.stopped():
            self._cancel(reader)

    def untrack(self, reader) -> None:
        with self._lock:
            self._readers.discard(reader)

    def abort(self) -> None:
        self.aborted.set()
        with self._lock:
            readers = list(self._readers)
        for reader in readers:
            self._cancel(reader)

    @staticmethod
    def _cancel(reader) -> None:
        try:
            reader.cancel()
        except Exception:  # pragma: no cover - best effort
            pass


class _ChunkFetcher:
    """Plans chunks of a rank's batch indices and assembles their batches from the endpoint
    streams; plans a chunk again (whole) when a stream fails in a way a new plan can cure, and
    registers the job again when the cluster lost it."""

    def __init__(self, client, spec: JobSpec, epoch: int, world_size: int, rank: int, streams: int):
        self.client = client
        self.spec = spec
        self.epoch = epoch
        self.world_size = world_size
        self.rank = rank
        self.rows = spec.rows_per_rank(world_size)
        self.cancelled = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=streams, thread_name_prefix=f"floe-job-{spec.job}")
        self._attempts: set = set()
        self._unreachable: Dict[str, float] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.cancelled.set()
        with self._lock:
            attempts = list(self._attempts)
        for attempt in attempts:
            attempt.abort()
        self.pool.shutdown(wait=False)

    def _what(self, indices: range) -> str:
        return (
            f"job '{self.spec.job}' epoch {self.epoch} rank {self.rank}/{self.world_size} "
            f"batches {indices.start}..{indices[-1]} step {indices.step}"
        )

    def _avoided(self) -> List[str]:
        """The nodes a stream could not reach lately, which plans keep slices off while a copy of
        them is elsewhere: until the cluster has noticed the node's death (seconds), a plan would
        otherwise send the read there again."""
        now = time.monotonic()
        with self._lock:
            for uri in [u for u, until in self._unreachable.items() if until <= now]:
                del self._unreachable[uri]
            return sorted(self._unreachable)

    def _unreachable_now(self, uri: str) -> None:
        with self._lock:
            self._unreachable[uri] = time.monotonic() + AVOID_SECONDS

    def fetch(self, indices: range) -> List[pa.RecordBatch]:
        """The rank's batches for ``indices`` (a non-empty range), in order."""
        what = self._what(indices)
        deadline = time.monotonic() + self.client.patience
        attempt = 0
        registered = 0
        while True:
            if self.cancelled.is_set():
                raise _Cancelled(what)
            grouped, avoid = batches_per_message(self.rows, len(indices)), self._avoided()

            def descriptor(uri: str) -> fl.FlightDescriptor:
                # Version 2 added batches_per_message and avoid: a node of version 1 refuses them.
                later = self.client._speaks(uri, 2)
                return job_descriptor(
                    self.spec, self.epoch, self.world_size, self.rank, indices.start, indices[-1] + 1, indices.step,
                    grouped if later else 1, avoid if later else (),
                )

            try:
                info, planned_through = self.client._plan_any(descriptor, what)
                return self._read(info, planned_through, indices, what)
            except JobNotFound as error:
                registered += 1
                if registered > _REREGISTER_MAX:
                    raise
                LOG.info("Job '%s' is unknown to the cluster (%s); registering it again", self.spec.job, error)
                self.client.register_job_spec(self.spec)
            except FloeError as error:
                if self.cancelled.is_set():
                    raise _Cancelled(what) from error
                if not is_retryable(error) or time.monotonic() > deadline:
                    raise
                LOG.info("Reading %s failed (%s); planning it again", what, error)
                if not isinstance(error, _Unreached):
                    # A node that could not be reached is avoided at once (the replan goes to a
                    # copy); anything else waits for the cluster to settle.
                    self.cancelled.wait(backoff(attempt))
                    attempt += 1

    def _read(self, info: fl.FlightInfo, planned_through: str, indices: range, what: str) -> List[pa.RecordBatch]:
        endpoints = list(info.endpoints)
        if not endpoints:
            raise FloeError(f"The plan of {what} has no endpoints", code="PROTOCOL")
        attempt = _Attempt(self.cancelled)
        with self._lock:
            self._attempts.add(attempt)
        try:
            futures = [
                self.pool.submit(self._stream, endpoint, planned_through, len(indices), attempt, what)
                for endpoint in endpoints
            ]
            wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in futures if f.done() and f.exception() is not None]
            if failed:
                attempt.abort()
                wait(futures)
                errors = [f.exception() for f in futures if f.exception() is not None]
                real = [e for e in errors if not isinstance(e, _Cancelled)]
                raise (real or errors)[0]
            streams = [f.result() for f in futures]
        finally:
            with self._lock:
                self._attempts.discard(attempt)
        by_index: Dict[int, List[_Part]] = collections.defaultdict(list)
        for stream in streams:
            for part in stream:
                by_index[part[0]].append(part)
        batches = []
        for k in indices:
            parts = by_index.pop(k, [])
            batch = _placed(parts, self.rows)
            if batch is None:
                raise FloeError(
                    f"Batch {k} of {what}: its parts from {len(parts)} of {len(streams)} endpoints "
                    f"({sum(b.num_rows for _, b, _ in parts)} rows) do not make batch_rows / world_size "
                    f"= {self.rows} rows, each at one place",
                    code="PROTOCOL",
                )
            batches.append(batch)
        if by_index:
            raise FloeError(f"The streams of {what} sent batches {sorted(by_index)[:5]} that were not asked for", code="PROTOCOL")
        return batches

    def _stream(self, endpoint: fl.FlightEndpoint, planned_through: str, count: int, attempt: _Attempt, what: str):
        """The parts of one endpoint: at most one per listed batch index, in order."""
        uri = self.client._location_of(endpoint, planned_through)
        batches: List[_Part] = []
        reader = None
        try:
            reader = self.client._flight(uri).do_get(endpoint.ticket, options=self.client._options(timeout=False))
            attempt.track(reader)
            while True:
                if attempt.stopped():
                    raise _Cancelled(what)
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    break
                if chunk.data is not None:
                    for part in _job_parts(chunk):
                        if batches and part[0] <= batches[-1][0]:
                            raise FloeError(f"The endpoint at {uri} for {what} sent batch {part[0]} after batch {batches[-1][0]}", code="PROTOCOL")
                        batches.append(part)
        except pa.ArrowException as e:
            if attempt.stopped():
                raise _Cancelled(what) from e
            error = translate(e)
            if isinstance(error, Unavailable) and uri not in self._avoided():
                self._unreachable_now(uri)
                raise _Unreached(uri, error) from e
            raise error from e
        finally:
            if reader is not None:
                attempt.untrack(reader)
        if len(batches) > count:
            raise FloeError(
                f"The endpoint at {uri} for {what} sent parts of {len(batches)} batches for {count} "
                f"batch indices (at most one each expected)",
                code="PROTOCOL",
            )
        return batches


def chunk_size(spec: JobSpec, world_size: int, chunk_batches: int) -> int:
    """Batch indices per plan: ``chunk_batches``, fewer for large batches (see the module doc)."""
    _check_int("chunk_batches", chunk_batches, 1)
    rows = spec.rows_per_rank(world_size)
    return max(1, min(chunk_batches, CHUNK_ROWS_MAX // rows))


def epoch_chunks(indices: range, size: int) -> List[range]:
    """``indices`` cut into the chunks :func:`read_epoch` plans: the first of one batch, so that the
    loop starts as soon as it is there, then each ``_CHUNK_GROWTH`` times the one before (each is
    fetched while the one before is consumed) up to ``size``."""
    chunks, start, length = [], 0, 1
    while start < len(indices):
        chunks.append(indices[start : start + length])
        start += length
        length = min(size, length * _CHUNK_GROWTH)
    return chunks


def read_epoch(
    client,
    spec: JobSpec,
    epoch: int,
    world_size: int,
    rank: int,
    indices: range,
    *,
    chunk_batches: int = CHUNK_BATCHES_DEFAULT,
    streams: int = STREAMS_DEFAULT,
) -> Iterator[Tuple[int, pa.RecordBatch]]:
    """Yields ``(k, batch)`` for every batch index ``k`` of ``indices``, in order, each once.

    Chunks of indices (the first of one batch, so that the loop starts at once, the next ones
    growing fourfold up to ``chunk_batches`` each) are planned one at a time; the next chunk is fetched (on a background
    thread, its endpoints ``streams`` at a time) while the current one is consumed. A chunk whose
    streams fail is planned again whole, so a batch is yielded only once every endpoint delivered
    its part. Closing the generator cancels what is still running."""
    if len(indices) == 0:
        return
    chunks = collections.deque(epoch_chunks(indices, chunk_size(spec, world_size, chunk_batches)))
    fetcher = _ChunkFetcher(client, spec, epoch, world_size, rank, streams)
    driver = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"floe-job-{spec.job}-plan")
    try:
        current = chunks.popleft()
        future = driver.submit(fetcher.fetch, current)
        while future is not None:
            batches = future.result()
            if chunks:
                following = chunks.popleft()
                future = driver.submit(fetcher.fetch, following)
            else:
                following, future = None, None
            for k, batch in zip(current, batches):
                yield k, batch
            del batches
            current = following
    finally:
        fetcher.close()
        driver.shutdown(wait=False)


def read_dynamic(
    client,
    spec: JobSpec,
    epoch: int,
    worker: str,
    *,
    auto_ack: bool = True,
    idle_items: bool = False,
    streams: int = STREAMS_DEFAULT,
) -> Iterator[Tuple[Optional[Lease], Optional[pa.RecordBatch]]]:
    """The dynamic-mode loop: lease a global batch, read it, yield ``(lease, batch)``; on "wait"
    sleep as told; stop on "done".

    With ``auto_ack`` a batch is acknowledged when the consumer asks for the next one (it is done
    with this one) and, for the last one, when it asks past the end; a consumer that stops early
    leaves its last batch unacknowledged, so the server hands it out again after the lease
    timeout. Without ``auto_ack`` the caller acknowledges each lease (:meth:`FloeClient.ack`).

    With ``idle_items`` each "wait" also yields ``(None, None)`` after its sleep, for a consumer
    that must not be blocked: a DataLoader takes its workers' items in turn, so a worker waiting
    for leases that another worker holds (read, but not yet consumed, so not acknowledged) would
    stall the loop until those leases time out."""
    fetcher = _ChunkFetcher(client, spec, epoch, 1, 0, streams)
    pending: Optional[Lease] = None
    try:
        while True:
            if pending is not None:
                acknowledge(client, pending)
                pending = None
            answer = client._job_call("lease", spec, {"job": spec.job, "epoch": int(epoch), "worker": worker})
            try:
                reply = lease_reply(answer)
            except (ValueError, KeyError, TypeError) as e:
                raise FloeError(f"Unexpected answer to lease for job '{spec.job}': {answer}", code="PROTOCOL") from e
            if isinstance(reply, Leased):
                lease = Lease(
                    job=spec.job, epoch=reply.epoch, batch=reply.batch, id=reply.lease, worker=worker, rows=reply.rows,
                )
                batch = fetcher.fetch(range(lease.batch, lease.batch + 1))[0]
                if auto_ack:
                    pending = lease
                yield lease, batch
            elif isinstance(reply, Wait):
                time.sleep(max(0, reply.retry_ms) / 1000.0)
                if idle_items:
                    yield None, None
            else:
                return
    finally:
        fetcher.close()


def acknowledge(client, lease: Lease) -> Dict[str, Any]:
    """Acknowledges ``lease`` and answers the server's answer (``status`` is ``acknowledged``,
    ``expired`` or ``duplicate``). An expired or duplicate answer, or a lease the server no longer
    knows, is logged, not raised: the server still counts every batch of the epoch once.

    A failure a retry can cure (the job's node died, the cluster did not answer in time) is tried
    again with back-off for up to the client's ``patience``: a data node's loss must not reach the
    training loop. Sending an acknowledgement twice is harmless (the second is a duplicate)."""
    deadline = time.monotonic() + getattr(client, "patience", 60.0)
    attempt = 0
    while True:
        try:
            answer = client.ack(lease.job, lease.epoch, lease.id, lease.worker)
            break
        except NotFound as e:
            LOG.warning("Lease %s of batch %d (job '%s', epoch %d) is unknown to the server: %s",
                        lease.id, lease.batch, lease.job, lease.epoch, e)
            return {"status": "unknown", "error": str(e)}
        except FloeError as e:
            delay = backoff(attempt)
            if not is_retryable(e) or time.monotonic() + delay > deadline:
                raise
            LOG.info("Acknowledging lease %s of job '%s' failed (%s); trying again", lease.id, lease.job, e)
            time.sleep(delay)
            attempt += 1
    try:
        status = ack_status(answer)
    except ValueError as e:
        raise FloeError(f"Unexpected answer to ack of lease {lease.id} for job '{lease.job}': {answer}",
                        code="PROTOCOL") from e
    if status != "acknowledged":
        LOG.warning("Lease %s of batch %d (job '%s', epoch %d) acknowledged as %s",
                    lease.id, lease.batch, lease.job, lease.epoch, status)
    return answer
