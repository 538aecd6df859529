"""PyTorch over a Floe training job: :class:`FloeIterableDataset` and :class:`FloeDataLoader`.

Import it as ``from floe_client.torch import FloeIterableDataset, FloeDataLoader``; the rest of ``floe_client``
does not need torch. Each item is one batch: this rank's ``batch_rows / world_size`` rows of a
global batch (deterministic mode) or one leased global batch (dynamic mode), turned into tensors
by :meth:`FloeIterableDataset.to_tensors`.

:class:`FloeDataLoader` reads in the training loop's own process by default: Floe's nodes did the
decoding, the batches arrive over Flight into Arrow memory, and the default tensors are views of
it, so worker processes would only add a copy of every batch through shared memory, a process
start per worker and CPU the loop needs. ``num_workers`` is the number of threads that run
:meth:`~FloeIterableDataset.to_tensors` ahead of the loop (pyarrow and torch release the GIL);
``worker_processes=True`` gives DataLoader's worker processes, for a ``to_tensors`` that holds
the GIL (decoding images in Python, say).

Deterministic mode: the loop sees global batches ``start, start + 1, ...``, the same on every
rank, so the count of batches the loop consumed is an exact resumption point for any world size
afterwards. With ``N`` worker processes, worker ``j`` reads ``start + j, start + j + N, ...`` and
DataLoader hands their items to the loop in turn, in the same order. Under torchdata's
``StatefulDataLoader`` with workers, each worker's state is its own position in global batches
(the next one it reads), so the loader's state resumes at any world size with as many workers.

Dynamic mode: every reader of every rank leases whole global batches from the server and the
main process acknowledges each one once the loop is done with it (when it asks for the next);
the server hands out again what is not acknowledged in time, so a rank that dies loses nothing.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence, Tuple

import pyarrow as pa
import torch
import torch.utils.data

from .client import FloeClient
from .jobs import JobSpec, Lease, acknowledge, default_worker_name
from .tensors import Transform, _checked_transforms, arrow_to_tensor, batch_to_tensors

__all__ = ["FloeIterableDataset", "FloeDataLoader", "LeasedBatch", "arrow_to_tensor", "STATE_VERSION"]

LOG = logging.getLogger("floe_client.torch")

STATE_VERSION = 1

def _rank_and_world() -> Tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


class LeasedBatch:
    """A dynamic-mode item on its way from the dataset to :class:`FloeDataLoader`: ``data`` (what
    :meth:`FloeIterableDataset.to_tensors` made of the batch) and the :class:`~floe_client.Lease` to
    acknowledge once the training loop is done with it. The loader hands the loop ``data`` alone;
    without the loader, acknowledge with :meth:`FloeIterableDataset.ack`."""

    __slots__ = ("data", "lease")

    def __init__(self, data: Any, lease: Lease):
        self.data = data
        self.lease = lease

    def __reduce__(self):
        return (LeasedBatch, (self.data, self.lease))

    def pin_memory(self) -> "LeasedBatch":
        """DataLoader's ``pin_memory=True`` pins ``data``."""
        return LeasedBatch(_pinned(self.data), self.lease)

    def __repr__(self) -> str:
        return f"LeasedBatch(batch={self.lease.batch}, lease={self.lease.id!r})"


def _pinned(data: Any) -> Any:
    """``data`` with every tensor in it (in dicts, lists and tuples, as to_tensors makes them)
    moved to page-locked memory."""
    if isinstance(data, torch.Tensor):
        return data.pin_memory()
    if isinstance(data, dict):
        return type(data)((key, _pinned(value)) for key, value in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(_pinned(value) for value in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pinned(value) for value in data)
    return data


class _Idle:
    """A dynamic-mode worker's "nothing for now" (see ``FloeIterableDataset._leased``);
    FloeDataLoader drops it."""

    def __reduce__(self):
        return (_idle, ())


def _idle() -> "_Idle":
    return _IDLE


_IDLE = _Idle()


class FloeIterableDataset(torch.utils.data.IterableDataset):
    """A Floe training job as a PyTorch ``IterableDataset``; each item is one batch.

    Job ``job`` over the READY dataset ``dataset``, with global batches of ``batch_rows`` rows. The
    job is registered on the cluster when it is first needed (the first iteration, ``len()``,
    ``layout`` or a state), not in the constructor, so a dataset can be built where the cluster
    is not reachable (a notebook, a unit test, a pickled config); :meth:`register` does it at
    once. Registering is idempotent: every rank may do it; other settings for the same id raise
    :class:`~floe_client.AlreadyExists`. The settings after ``batch_rows`` are the job's
    (:meth:`floe_client.FloeClient.register_job`); ``None`` leaves them to the server.

    The rank and world size come from ``torch.distributed`` when it is initialized, else from the
    environment variables ``RANK`` and ``WORLD_SIZE`` (default 0 and 1), unless given as
    ``rank=``/``world_size=``. In deterministic mode the world size must divide ``batch_rows``.

    Use it with ``FloeDataLoader(dataset, num_workers=...)`` (a DataLoader with
    ``batch_size=None`` that also counts what the loop consumed, for :meth:`state_dict`, and
    acknowledges dynamic leases; ``persistent_workers=True`` is fine: the epoch and the resume
    point reach the workers through shared memory). A plain ``DataLoader(dataset, batch_size=None)`` works in
    deterministic mode; in dynamic mode it works only without workers (the dataset then
    acknowledges a batch when the next is asked for).

    :param client_options: passed to :class:`floe_client.FloeClient` (``patience``, ``timeout``, ...).
    :param read_options: passed to :meth:`floe_client.FloeClient.read_job` (``chunk_batches``,
        ``streams``).
    :param column_transforms: ``{column: function}`` for :meth:`to_tensors`: each function takes
        the column's ``pyarrow.Array`` and answers the item's value for it (None leaves the column
        out); the others go through :func:`floe_client.tensors.to_tensor`. The functions of
        :mod:`floe_client.tensors` (``fixed``, ``jagged``, ``padded``, ``decode(fn)``, ``arrow``) cover
        the common shapes. Spawned workers get a pickled dataset: no lambdas.
    """

    def __init__(
        self,
        address: str,
        dataset: str,
        job: str,
        batch_rows: int,
        *,
        seed: int = 0,
        shuffle: bool = True,
        mode: str = "deterministic",
        columns: Optional[Sequence[str]] = None,
        tail: str = "drop",
        block_rows: Optional[int] = None,
        window_blocks: Optional[int] = None,
        run_rows: Optional[int] = None,
        lease_timeout_ms: Optional[int] = None,
        pin_layout: Optional[bool] = None,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        client_options: Optional[Dict[str, Any]] = None,
        read_options: Optional[Dict[str, Any]] = None,
        column_transforms: Optional[Mapping[str, Optional[Transform]]] = None,
    ):
        super().__init__()
        self.column_transforms = _checked_transforms(column_transforms)
        unknown = [name for name in self.column_transforms if columns is not None and name not in columns]
        if unknown:
            raise ValueError(
                f"column_transforms names columns the job does not read: {', '.join(unknown)}; "
                f"it reads: {', '.join(columns)}"
            )
        self.spec = JobSpec(
            job,
            dataset,
            batch_rows,
            seed=seed,
            shuffle=shuffle,
            mode=mode,
            columns=columns,
            tail=tail,
            block_rows=block_rows,
            window_blocks=window_blocks,
            run_rows=run_rows,
            lease_timeout_ms=lease_timeout_ms,
            pin_layout=pin_layout,
        )
        self.address = address
        self.rank = rank
        self.world_size = world_size
        self.client_options = dict(client_options or {})
        self.read_options = dict(read_options or {})
        # [epoch, epoch to resume (-1: none), batches consumed before it]: in shared memory so
        # that persistent DataLoader workers, which keep their copy of the dataset from epoch to
        # epoch, read the epoch and resume point the main process set.
        self._position = torch.tensor([0, -1, 0], dtype=torch.int64).share_memory_()
        self._check_world()
        self._registered = False
        # Each epoch's layout and batch count, as the job answers them (an epoch begins on the
        # dataset's newest layout after a refresh, unless the job pins its layout).
        self._epochs: Dict[int, dict] = {}
        # Set by FloeDataLoader: it unwraps dynamic items and acknowledges them.
        self._loader_acks = False
        # [epoch, first global batch, items handed out, step between batches] of this process's
        # latest iteration: the loop's own position without DataLoader workers, a worker's own
        # share in a worker.
        self._progress: Optional[list] = None
        # (epoch, next global batch) a DataLoader worker's state (load_state_dict in a worker, as
        # torchdata's StatefulDataLoader does) sets for that worker's next iteration; local to
        # the process, unlike the loop-level resume point in _position (shared memory).
        self._worker_resume: Optional[Tuple[int, int]] = None
        # Raised to 1 by a DataLoader worker that iterates this dataset; shared memory survives
        # spawn and fork alike, so the main process knows its own count is not the loop's.
        self._read_by_workers = torch.zeros(1, dtype=torch.int64).share_memory_()
        # Set by FloeDataLoader's threads, which read ahead of the loop in this process.
        self._read_ahead = False

    # -- what a subclass may override ----------------------------------------------------------

    def to_tensors(self, batch: pa.RecordBatch) -> Any:
        """Turns one record batch into one item. The default:
        :func:`floe_client.tensors.batch_to_tensors` with this dataset's ``column_transforms``, a
        ``{column: value}`` dict where numeric, boolean and temporal columns are 1-d tensors
        (zero-copy where Arrow allows), lists of numbers of one length ``L`` are ``(rows, L)``
        tensors, ragged ones :class:`floe_client.tensors.Jagged`, and strings, binary, decimals, structs
        and maps stay ``pyarrow.Array`` (DataLoader passes them through as they are). Override it
        to tokenize text, build labels, stack features, and so on."""
        return batch_to_tensors(batch, self.column_transforms)

    # -- the job -------------------------------------------------------------------------------

    @property
    def job(self) -> str:
        return self.spec.job

    def register(self) -> Dict[str, Any]:
        """Registers the job now (otherwise it happens on first need) and answers its status;
        raises what the server refuses (:class:`~floe_client.DatasetNotFound`,
        :class:`~floe_client.AlreadyExists`, ...). Idempotent."""
        with FloeClient(self.address, **self.client_options) as client:
            status = client.register_job_spec(self.spec)
        self._registered = True
        return status

    def _ensure_registered(self) -> None:
        if not self._registered:
            self.register()

    @property
    def epoch(self) -> int:
        """The epoch the next iteration reads (:meth:`set_epoch`)."""
        return int(self._position[0])

    @epoch.setter
    def epoch(self, epoch: int) -> None:
        self._position[0] = epoch

    @property
    def _resume(self) -> Optional[Tuple[int, int]]:
        """(epoch, batches consumed) from load_state_dict: where that epoch goes on."""
        epoch = int(self._position[1])
        return None if epoch < 0 else (epoch, int(self._position[2]))

    @_resume.setter
    def _resume(self, resume: Optional[Tuple[int, int]]) -> None:
        self._position[1], self._position[2] = (-1, 0) if resume is None else resume

    def _epoch_status(self, epoch: int) -> dict:
        status = self._epochs.get(epoch)
        if status is None:
            self._ensure_registered()
            with FloeClient(self.address, **self.client_options) as client:
                status = client._job_call("job_status", self.spec, {"job": self.spec.job, "epoch": epoch})
            self._epochs[epoch] = status
        return status

    @property
    def layout(self) -> str:
        """The dataset layout the current epoch reads (its snapshot and slices)."""
        return str(self._epoch_status(self.epoch)["layout"])

    @property
    def batches_per_epoch(self) -> int:
        """Global batches in the current epoch (its layout's rows over ``batch_rows``)."""
        return int(self._epoch_status(self.epoch)["batches_per_epoch"])

    def _rank_world(self) -> Tuple[int, int]:
        rank, world = _rank_and_world()
        rank = self.rank if self.rank is not None else rank
        world = self.world_size if self.world_size is not None else world
        if world < 1 or not 0 <= rank < world:
            raise ValueError(f"Invalid rank {rank} for world size {world}")
        return rank, world

    def _check_world(self) -> Tuple[int, int]:
        rank, world = self._rank_world()
        if not self.spec.dynamic:
            self.spec.rows_per_rank(world)  # raises unless world divides batch_rows
        return rank, world

    def _start(self, epoch: int) -> int:
        if self._resume is not None and self._resume[0] == epoch:
            return self._resume[1]
        return 0

    def __len__(self) -> int:
        """Deterministic mode: the batches the next iteration yields on this rank (the epoch's,
        minus those consumed before a resumption)."""
        if self.spec.dynamic:
            raise TypeError("A dynamic-mode job has no fixed length per rank")
        return self.batches_per_epoch - self._start(self.epoch)

    # -- epochs and progress -------------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Chooses the epoch the next iteration reads: call it before each epoch, as with
        ``DistributedSampler``. A state loaded with :meth:`load_state_dict` applies to its own
        epoch only; any other epoch starts at its first batch."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"Invalid epoch: {epoch!r} (must be an integer >= 0)")
        self.epoch = epoch

    def state_dict(self, batches_consumed: Optional[int] = None) -> Dict[str, Any]:
        """Where the training loop stands in the job.

        Deterministic mode: ``{"version", "job", "dataset", "layout", "seed", "batch_rows",
        "epoch", "batches_consumed", "world_size"}``; the loop consumed global batches ``0 ...
        batches_consumed - 1`` of ``epoch`` (on every rank). ``batches_consumed`` is what the loop
        consumed in the current epoch, counting the batches before a resumption; without it the
        dataset's own count is used, which is exact only when it was read without DataLoader
        workers (workers read ahead of the loop): with workers use :class:`FloeDataLoader`'s
        ``state_dict()``, which counts what it handed to the loop.

        In a DataLoader worker (torchdata's ``StatefulDataLoader`` asks each worker for it) it is
        that worker's own position instead: the same keys with ``worker``, ``workers`` and
        ``next_batch`` (the global batch it reads next; it reads every ``workers``-th) in place
        of ``batches_consumed``. Loaded into worker ``worker`` of a loader with ``workers``
        workers, at any world size, it goes on from there.

        Dynamic mode: ``{"version", "mode", "job", "dataset", "layout", "epoch"}``; the server
        keeps what was acknowledged."""
        spec = self.spec
        if not spec.dynamic and batches_consumed is None:
            info = torch.utils.data.get_worker_info()
            if info is not None:
                return self._worker_state(info.id, info.num_workers)
        if spec.dynamic:
            return {
                "version": STATE_VERSION,
                "mode": spec.mode,
                "job": spec.job,
                "dataset": spec.dataset,
                "layout": self.layout,
                "epoch": self.epoch,
            }
        _, world = self._rank_world()
        if batches_consumed is None:
            progress = self._progress
            if self._read_ahead:
                raise ValueError(self._READ_AHEAD)
            if progress is not None and progress[0] == self.epoch:
                batches_consumed = progress[1] + progress[2] * progress[3]
            elif int(self._read_by_workers[0]):
                raise ValueError(self._READ_AHEAD)
            else:
                batches_consumed = self._start(self.epoch)
        if isinstance(batches_consumed, bool) or not isinstance(batches_consumed, int):
            raise TypeError(f"batches_consumed must be an integer, not {batches_consumed!r}")
        if not 0 <= batches_consumed <= self.batches_per_epoch:
            raise ValueError(
                f"Invalid batches_consumed: {batches_consumed} (the epoch has "
                f"{self.batches_per_epoch} batches)"
            )
        return {
            "version": STATE_VERSION,
            "job": spec.job,
            "dataset": spec.dataset,
            "layout": self.layout,
            "seed": spec.seed,
            "batch_rows": spec.batch_rows,
            "epoch": self.epoch,
            "batches_consumed": batches_consumed,
            "world_size": world,
        }

    def _worker_state(self, worker: int, workers: int) -> Dict[str, Any]:
        """A DataLoader worker's own position: the global batch it reads next."""
        if self._progress is not None:
            epoch, first, handed, step = self._progress
            next_batch = first + handed * step
        else:  # not iterated in this worker yet: where its iteration would start
            epoch, next_batch, _ = self._iteration_start(take_resume=False)
        _, world = self._rank_world()
        spec = self.spec
        status = self._epoch_status(epoch)
        return {
            "version": STATE_VERSION,
            "job": spec.job,
            "dataset": spec.dataset,
            "layout": str(status["layout"]),
            "seed": spec.seed,
            "batch_rows": spec.batch_rows,
            "epoch": epoch,
            "world_size": world,
            "worker": worker,
            "workers": workers,
            # A worker whose share ran out points past the end; the end says the same.
            "next_batch": min(next_batch, int(status["batches_per_epoch"])),
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resumes from a :meth:`state_dict` (of any rank, at any world size): the next iteration
        reads the saved epoch from global batch ``batches_consumed`` on, split among the current
        ranks; later epochs start at 0. A state whose epoch was read to its end moves on to the
        next epoch (its first batch) and leaves the saved epoch empty if it is chosen again.
        Raises ValueError if the state is of another job, dataset, layout, seed or batch size.

        A DataLoader worker's state (see :meth:`state_dict`) is loaded in that worker, by
        torchdata's ``StatefulDataLoader``: the worker's next iteration goes on in the saved
        epoch from the saved global batch, whatever epoch :meth:`set_epoch` chose."""
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError(f"Unknown state version {state.get('version') if isinstance(state, dict) else state!r}")
        spec = self.spec
        saved_mode = state.get("mode", "deterministic")
        epoch = state.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"Invalid epoch in the state: {epoch!r}")
        expected = {"job": spec.job, "dataset": spec.dataset, "layout": str(self._epoch_status(epoch)["layout"])}
        if not spec.dynamic:
            expected.update(seed=spec.seed, batch_rows=spec.batch_rows)
        wrong = [f"mode {saved_mode!r}, this dataset's {spec.mode!r}"] if saved_mode != spec.mode else []
        wrong += [
            f"{key} {state.get(key)!r}, this dataset's {value!r}"
            for key, value in expected.items()
            if state.get(key) != value
        ]
        if wrong:
            raise ValueError("The state was saved for another job or order: saved " + "; ".join(wrong))
        if "worker" in state and not spec.dynamic:
            self._load_worker_state(state, epoch)
            return
        self.epoch = epoch
        self._progress = None
        if spec.dynamic:
            self._resume = None
            return
        consumed = state.get("batches_consumed")
        batches = int(self._epoch_status(epoch)["batches_per_epoch"])
        if isinstance(consumed, bool) or not isinstance(consumed, int) or not 0 <= consumed <= batches:
            raise ValueError(
                f"Invalid batches_consumed in the state: {consumed!r} (the epoch has {batches} batches)"
            )
        self._resume = (epoch, consumed)
        if consumed == batches:
            # What comes next is the next epoch. A StatefulDataLoader loads the state when its
            # iteration starts, after the loop's set_epoch for that iteration: staying in the
            # finished epoch would give the loop an empty epoch in place of the next one.
            self.epoch = epoch + 1

    def _load_worker_state(self, state: Dict[str, Any], epoch: int) -> None:
        worker, workers = state.get("worker"), state.get("workers")
        info = torch.utils.data.get_worker_info()
        if info is None:
            raise ValueError(
                f"This state is DataLoader worker {worker}'s of {workers} (torchdata's StatefulDataLoader "
                "keeps one per worker and hands each back to its worker); to resume a loop here, save "
                "FloeDataLoader.state_dict() or this dataset's state_dict() outside workers"
            )
        if (worker, workers) != (info.id, info.num_workers):
            raise ValueError(
                f"This state is DataLoader worker {worker}'s of {workers}, loaded in worker {info.id} of "
                f"{info.num_workers}: a worker's position holds only with the same number of workers"
            )
        next_batch = state.get("next_batch")
        batches = int(self._epoch_status(epoch)["batches_per_epoch"])
        if isinstance(next_batch, bool) or not isinstance(next_batch, int) or not 0 <= next_batch <= batches:
            raise ValueError(f"Invalid next_batch in the state: {next_batch!r} (the epoch has {batches} batches)")
        self._worker_resume = (epoch, next_batch)

    # -- iteration -----------------------------------------------------------------------------

    def _worker(self) -> Tuple[int, int]:
        info = torch.utils.data.get_worker_info()
        if info is None:
            return 0, 1
        self._read_by_workers[0] = 1
        return info.id, info.num_workers

    def _iteration_start(self, take_resume: bool = True) -> Tuple[int, int, int]:
        """(epoch, first global batch, step) of this process's next iteration: a worker's own
        resume point if one was loaded (taken, unless ``take_resume`` is False), else the
        current epoch from the loop's resume point, worker ``j`` of ``N`` reading every ``N``-th
        batch from ``j`` on."""
        worker, workers = self._worker()
        resume = self._worker_resume
        if take_resume:
            self._worker_resume = None
        if resume is not None:
            return resume[0], resume[1], workers
        epoch = self.epoch
        return epoch, self._start(epoch) + worker, workers

    def batches(self) -> Iterator[Tuple[int, pa.RecordBatch]]:
        """Deterministic mode: ``(k, record batch)`` for the global batches this rank and
        DataLoader worker read in the current epoch (before :meth:`to_tensors`)."""
        if self.spec.dynamic:
            raise TypeError("batches() reads deterministic jobs; a dynamic job leases its batches")
        yield from self._read(*self._iteration_start())

    def _read(self, epoch: int, first: int, step: int) -> Iterator[Tuple[int, pa.RecordBatch]]:
        rank, world = self._check_world()
        self._ensure_registered()
        client = FloeClient(self.address, **self.client_options)
        reader = None
        try:
            reader = client.read_job(
                self.spec, epoch, world, rank,
                batch_from=first, batch_step=step, batch_to=int(self._epoch_status(epoch)["batches_per_epoch"]),
                **self.read_options,
            )
            yield from reader
        finally:
            if reader is not None:
                reader.close()  # stops its threads before the connections close
            client.close()

    _READ_AHEAD = (
        "This dataset was read ahead of the training loop (by FloeDataLoader or by DataLoader "
        "workers): take the state from floe_client.torch.FloeDataLoader(...).state_dict(), or pass "
        "batches_consumed (the batches the loop consumed this epoch)"
    )

    def __iter__(self) -> Iterator[Any]:
        self._read_ahead = False  # read by the loop itself: its own count is the loop's
        return self._items(self.to_tensors)

    def _items(self, convert: Callable[[pa.RecordBatch], Any]) -> Iterator[Any]:
        """The items of an iteration, each record batch through ``convert`` (``to_tensors``, or
        nothing where FloeDataLoader's threads convert them). The position is taken here, when
        the iteration is made, not at its first item: StatefulDataLoader asks a worker for its
        state right after making its iterator."""
        if self.spec.dynamic:
            return self._leased(convert)
        progress = [*self._iteration_start()]
        progress.insert(2, 0)  # [epoch, first, handed out, step]
        self._progress = progress
        return self._deterministic(progress, convert)

    def _deterministic(self, progress: list, convert: Callable[[pa.RecordBatch], Any]) -> Iterator[Any]:
        epoch, first, _, step = progress
        for _, batch in self._read(epoch, first, step):
            item = convert(batch)
            progress[2] += 1  # handed out: once next() returned, the loop has it
            yield item

    def _leased(self, convert: Callable[[pa.RecordBatch], Any]) -> Iterator[Any]:
        worker, _ = self._worker()
        rank, _ = self._rank_world()
        if torch.utils.data.get_worker_info() is not None and not self._loader_acks:
            # A worker cannot tell when the loop is done with a batch; the main process can.
            raise RuntimeError(
                "A dynamic-mode FloeIterableDataset read by DataLoader workers needs "
                "floe_client.torch.FloeDataLoader, which acknowledges each batch once the loop is done with it"
            )
        name = default_worker_name(f"rank-{rank}/worker-{worker}")
        self._ensure_registered()
        client = FloeClient(self.address, **self.client_options)
        reader = None
        try:
            # Without the loader (no workers) the batch is acknowledged when the next is asked for.
            reader = client.read_dynamic(
                self.spec, self.epoch, name, auto_ack=not self._loader_acks, idle_items=self._loader_acks
            )
            for lease, batch in reader:
                if lease is None:
                    # Every batch is leased, some not acknowledged yet: let the DataLoader move on
                    # to the other workers' items (it takes them in turn), whose consumption
                    # acknowledges them.
                    yield _IDLE
                    continue
                data = convert(batch)
                yield LeasedBatch(data, lease) if self._loader_acks else data
        finally:
            if reader is not None:
                reader.close()
            client.close()

    def ack(self, lease: Lease, client: Optional[FloeClient] = None) -> Dict[str, Any]:
        """Acknowledges a dynamic-mode lease (what :class:`FloeDataLoader` does for each batch the
        loop is done with); answers the server's answer (``status``)."""
        if client is not None:
            return acknowledge(client, lease)
        with FloeClient(self.address, **self.client_options) as own:
            return acknowledge(own, lease)


def _unconverted(batch: pa.RecordBatch) -> pa.RecordBatch:
    return batch


class _Ended:
    """The end of a pipeline's source, or the error it ended with."""

    def __init__(self, error: Optional[BaseException] = None):
        self.error = error


def _pipelined(source: Iterator[Any], convert: Callable[[Any], Any], threads: int, depth: int) -> Iterator[Any]:
    """The items of ``source`` through ``convert``, in order: ``source`` runs on a thread of its
    own, ``convert`` on ``threads`` more (on the source's thread when ``threads`` < 2), and at most
    ``depth`` items wait converted or converting ahead of the consumer. Closing the iterator stops
    the source (closed on its own thread) and drops what was read ahead."""
    ready: "queue.Queue[Any]" = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="floe-to-tensors") if threads > 1 else None

    def put(entry: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        ended = _Ended()
        try:
            for raw in source:
                if pool is not None:
                    entry: Any = pool.submit(convert, raw)
                else:
                    entry = Future()
                    entry.set_result(convert(raw))
                if not put(entry):
                    break
        except BaseException as error:  # handed to the consumer, raised there
            ended = _Ended(error)
        finally:
            try:
                source.close()
            finally:
                put(ended)

    producer = threading.Thread(target=produce, name="floe-loader", daemon=True)
    producer.start()
    try:
        while True:
            entry = ready.get()
            if isinstance(entry, _Ended):
                if entry.error is not None:
                    raise entry.error
                return
            yield entry.result()
    finally:
        stop.set()
        while True:  # lets a producer blocked on a full queue see the stop
            try:
                ready.get_nowait()
            except queue.Empty:
                break
        if pool is not None:
            pool.shutdown(wait=False)


# DataLoader settings that only mean something for worker processes.
_PROCESS_SETTINGS = ("multiprocessing_context", "persistent_workers", "worker_init_fn", "timeout", "prefetch_factor")


class FloeDataLoader(torch.utils.data.DataLoader):
    """A ``DataLoader`` over a :class:`FloeIterableDataset` (``batch_size=None``: items are
    already batches) that reads in the training loop's process and knows what the loop consumed.

    * By default no worker process is started: a thread reads the job ahead of the loop (its
      streams and the next chunk are fetched in the background), and ``num_workers`` threads run
      :meth:`~FloeIterableDataset.to_tensors` (on the reading thread when it is 0 or 1), at most
      ``prefetch_factor * max(1, num_workers)`` items ahead. The first batch of an epoch comes
      without a process start, every epoch. ``worker_processes=True`` starts DataLoader's worker
      processes instead (spawned: the main process used gRPC before they start, and a forked
      child of a gRPC process can hang), for a ``to_tensors`` that holds the GIL; with
      ``persistent_workers=True`` they stay up between epochs and read the epoch
      :meth:`FloeIterableDataset.set_epoch` chose (it is kept in shared memory).
    * :meth:`state_dict` counts the batches this loader handed to the loop, not what it fetched
      ahead, so resuming from it (at any world size) repeats and skips nothing.
    * Dynamic mode: each batch is acknowledged from the main process when the loop asks for the
      next one (it finished the step) and the last one when the iteration ends; a loop that
      breaks off leaves its last batch unacknowledged (the server hands it out again after the
      lease timeout). ``acks`` counts the answers; :meth:`on_ack` sees each one;
      ``current_lease`` is the lease of the batch the loop holds.
    """

    def __init__(self, dataset: FloeIterableDataset, *, worker_processes: bool = False, **kwargs: Any):
        if not isinstance(dataset, FloeIterableDataset):
            raise TypeError(f"FloeDataLoader takes a FloeIterableDataset, not {type(dataset).__name__}")
        if not isinstance(worker_processes, bool):
            raise TypeError(f"worker_processes must be True or False, not {worker_processes!r}")
        batch_size = kwargs.setdefault("batch_size", None)
        if batch_size is not None:
            raise ValueError(f"FloeDataLoader's items are whole batches already; batch_size must be None, not {batch_size!r}")
        workers = kwargs.get("num_workers", 0)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"Invalid num_workers: {workers!r} (must be an integer >= 0)")
        self.worker_processes = worker_processes
        if worker_processes:
            if workers > 0:
                # The main process has talked gRPC (registration, the epoch's layout) before the
                # workers start; a forked worker can inherit gRPC's threads mid-call and hang.
                kwargs.setdefault("multiprocessing_context", "spawn")
            self.threads = 0
            self.read_ahead = 0
        else:
            self.threads = kwargs.pop("num_workers", 0)
            prefetch = kwargs.get("prefetch_factor")
            self.read_ahead = (2 if prefetch is None else int(prefetch)) * max(1, self.threads)
            if kwargs.get("worker_init_fn") is not None:
                raise ValueError(
                    "worker_init_fn runs in worker processes; FloeDataLoader reads in this process "
                    "unless worker_processes=True"
                )
            for name in _PROCESS_SETTINGS:
                kwargs.pop(name, None)
        super().__init__(dataset, **kwargs)
        dataset._loader_acks = True
        self._epoch: Optional[int] = None
        self._start = 0
        self._yielded = 0
        self._client: Optional[FloeClient] = None
        self.acks: "collections.Counter[str]" = collections.Counter()
        self.current_lease: Optional[Lease] = None

    def __iter__(self):
        dataset: FloeIterableDataset = self.dataset
        # Once here rather than in every worker.
        dataset._ensure_registered()
        self._epoch = dataset.epoch
        self._start = 0 if dataset.spec.dynamic else dataset._start(dataset.epoch)
        self._yielded = 0
        if self.worker_processes:
            return self._consume(super().__iter__())
        # Read ahead of the loop: the dataset's own count is not the loop's (state_dict says so).
        dataset._read_ahead = True
        return self._consume(_pipelined(dataset._items(_unconverted), self._convert, self.threads, self.read_ahead))

    def _convert(self, raw: Any) -> Any:
        """An item of :meth:`FloeIterableDataset._items` as the loop gets it: through
        ``to_tensors``, and pinned when ``pin_memory`` is set and CUDA is there."""
        if isinstance(raw, _Idle):
            return raw
        dataset: FloeIterableDataset = self.dataset
        pin = self.pin_memory and torch.cuda.is_available()
        if isinstance(raw, LeasedBatch):
            item = LeasedBatch(dataset.to_tensors(raw.data), raw.lease)
            return item.pin_memory() if pin else item
        item = dataset.to_tensors(raw)
        return _pinned(item) if pin else item

    def _consume(self, inner) -> Iterator[Any]:
        pending: Optional[Lease] = None
        try:
            while True:
                if pending is not None:
                    self._ack(pending)  # the loop asked for the next batch: it is done with this one
                    pending = None
                    self.current_lease = None
                try:
                    item = next(inner)
                except StopIteration:
                    return
                if isinstance(item, _Idle):
                    continue
                if isinstance(item, LeasedBatch):
                    pending = self.current_lease = item.lease
                    item = item.data
                self._yielded += 1
                yield item
        finally:
            # A loop that breaks off stops the workers now: the DataLoader's iterator shuts them
            # down when its last reference goes (persistent workers are held by the loader).
            del inner

    def _ack(self, lease: Lease) -> None:
        if self._client is None:
            dataset: FloeIterableDataset = self.dataset
            self._client = FloeClient(dataset.address, **dataset.client_options)
        answer = acknowledge(self._client, lease)
        self.acks[str(answer.get("status"))] += 1
        self.on_ack(lease, answer)

    def on_ack(self, lease: Lease, answer: Dict[str, Any]) -> None:
        """Called with each lease acknowledged and the server's answer (``status``:
        ``acknowledged``, ``expired``, ``duplicate``, or ``unknown`` for a lease the server no
        longer knows). Does nothing; override it to log or count."""

    @property
    def batches_consumed(self) -> int:
        """Global batches of the current epoch the loop has consumed (deterministic mode)."""
        dataset: FloeIterableDataset = self.dataset
        if self._epoch == dataset.epoch:
            return self._start + self._yielded
        return dataset._start(dataset.epoch)

    def state_dict(self) -> Dict[str, Any]:
        """The dataset's :meth:`~FloeIterableDataset.state_dict` with the batches this loader
        handed to the training loop."""
        dataset: FloeIterableDataset = self.dataset
        if dataset.spec.dynamic:
            return dataset.state_dict()
        return dataset.state_dict(batches_consumed=self.batches_consumed)

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resumes from a :meth:`state_dict` (see :meth:`FloeIterableDataset.load_state_dict`)."""
        self.dataset.load_state_dict(state)
        self._epoch = None

    def set_epoch(self, epoch: int) -> None:
        """The dataset's :meth:`~FloeIterableDataset.set_epoch`, for trainers that set the epoch
        on the loader they are given (Hugging Face's ``Trainer`` does, each epoch)."""
        self.dataset.set_epoch(epoch)

    def close(self) -> None:
        """Closes the connection the loader acknowledges through."""
        if self._client is not None:
            self._client.close()
            self._client = None
