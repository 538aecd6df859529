"""A PyTorch ``IterableDataset`` over a Floe dataset.

Import it as ``from floe.torch import FloeIterableDataset``; the rest of ``floe`` does not need
torch. Each item is one batch of rows (a dict of tensors by default), so use it with
``DataLoader(dataset, batch_size=None, num_workers=...)``.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import torch
import torch.utils.data

from .client import FloeClient

__all__ = ["FloeIterableDataset", "arrow_to_tensor"]

# torch has no unsigned types wider than 8 bits (before 2.3); those become int64.
_WIDEN = (pa.uint16(), pa.uint32(), pa.uint64())


def arrow_to_tensor(column: pa.Array) -> torch.Tensor:
    """One numeric, boolean or temporal Arrow column as a 1-d tensor: zero-copy from Arrow's
    buffer where the layout allows (primitive types without nulls), otherwise a copy. Temporal
    columns become their integer representation (timestamps: int64 in their unit since the epoch).
    Integer columns with nulls become float64 with NaN for the nulls."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    kind = column.type
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind) or pa.types.is_date64(kind) or kind == pa.time64("us") or kind == pa.time64("ns"):
        column = column.view(pa.int64())
    elif pa.types.is_date32(kind) or pa.types.is_time32(kind):
        column = column.view(pa.int32())
    elif kind in _WIDEN:
        column = column.cast(pa.int64())
    if column.null_count == 0 and not pa.types.is_boolean(column.type):
        array = column.to_numpy(zero_copy_only=True)
    else:
        array = column.to_numpy(zero_copy_only=False)
    if not array.flags.writeable:
        # Arrow's buffers are immutable; torch warns about sharing a read-only array. The tensor
        # shares Arrow's memory (writing into it in place would change the batch).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            return torch.from_numpy(array)
    return torch.from_numpy(np.ascontiguousarray(array))


def _is_numeric(kind: pa.DataType) -> bool:
    return (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_temporal(kind)
    )


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]


def _rebatch(batches: Iterator[pa.RecordBatch], size: int, drop_last: bool) -> Iterator[pa.RecordBatch]:
    pending, count = [], 0
    for batch in batches:
        while batch.num_rows:
            take = min(size - count, batch.num_rows)
            pending.append(batch.slice(0, take))
            count += take
            batch = batch.slice(take)
            if count == size:
                yield _concat(pending)
                pending, count = [], 0
    if pending and not drop_last:
        yield _concat(pending)


def _select(batch: pa.RecordBatch, columns: Sequence[str]) -> pa.RecordBatch:
    names = batch.schema.names
    missing = [c for c in columns if c not in names]
    if missing:
        raise KeyError(f"Columns {missing} are not in the dataset; it has {names}")
    return pa.RecordBatch.from_arrays(
        [batch.column(names.index(c)) for c in columns],
        schema=pa.schema([batch.schema.field(c) for c in columns], metadata=batch.schema.metadata),
    )


def _rank_and_world() -> Tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


class FloeIterableDataset(torch.utils.data.IterableDataset):
    """Streams a loaded Floe dataset to a training job, every row once per epoch across all ranks
    and DataLoader workers.

    Each DataLoader worker of each rank reads its own shard: shard ``rank * num_workers +
    worker_id`` of ``world_size * num_workers``. Floe's shards are contiguous row ranges whose
    sizes differ by at most one row, so no two readers overlap and every rank gets (almost) the
    same amount of data. The rank and world size come from ``torch.distributed`` when it is
    initialized, else from the environment variables ``RANK`` and ``WORLD_SIZE`` (default 0 and
    1), unless given explicitly.

    Each item is one batch: the rows of one Arrow record batch as the server sends them (at most
    the dataset's ``batch_rows``), or exactly ``batch_size`` rows when that is given. Use
    ``DataLoader(dataset, batch_size=None, num_workers=N)``.

    Override :meth:`to_tensors` to turn a record batch into what the model takes (as in Kubeflow's
    ``from_arrow_rb_to_tensor``). The default makes a dict of tensors of the numeric, boolean and
    temporal columns (zero-copy where Arrow's layout allows) and leaves string and other columns
    out.

    :param address: a node's Flight address (``"grpc+tcp://host:port"`` or ``"host:port"``).
    :param dataset: the loaded dataset's name.
    :param columns: the columns handed to :meth:`to_tensors`, in this order (default: all the
        dataset serves).
    :param batch_size: rows per item; ``None`` passes the server's batches through as they are.
    :param drop_last: with ``batch_size``, drop a shard's last, smaller batch.
    :param rank: this process's rank (default: see above).
    :param world_size: the number of ranks (default: see above).
    :param client_options: passed to :class:`floe.FloeClient` (``patience``, ``prefetch``, ...).
    :param max_workers: the most DataLoader workers whose progress :meth:`state_dict` can record.
    """

    def __init__(
        self,
        address: str,
        dataset: str,
        columns: Optional[Sequence[str]] = None,
        *,
        batch_size: Optional[int] = None,
        drop_last: bool = False,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        client_options: Optional[Dict[str, Any]] = None,
        max_workers: int = 64,
    ):
        super().__init__()
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if isinstance(columns, str):
            raise TypeError("columns must be a sequence of column names, not a string")
        self.address = address
        self.dataset = dataset
        self.columns = list(columns) if columns is not None else None
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.rank = rank
        self.world_size = world_size
        self.client_options = dict(client_options or {})
        self.max_workers = max_workers
        self.epoch = 0
        self._resume: Optional[Dict[str, Any]] = None
        # Progress written by the DataLoader workers (other processes) and read by state_dict()
        # in the main process: rows consumed per worker, and [num_workers, epoch] as the workers
        # saw them. Shared memory survives fork and spawn alike.
        self._rows = torch.zeros(max_workers, dtype=torch.int64).share_memory_()
        self._seen = torch.full((2,), -1, dtype=torch.int64).share_memory_()

    # -- what a subclass may override ----------------------------------------------------------

    def to_tensors(self, batch: pa.RecordBatch) -> Any:
        """Turns one record batch into one item. The default: ``{column: tensor}`` for every
        numeric, boolean and temporal column (see :func:`arrow_to_tensor`); string, binary,
        nested and decimal columns are left out. Override it to tokenize text, build labels,
        stack features, and so on."""
        return {
            name: arrow_to_tensor(column)
            for name, column in zip(batch.schema.names, batch.columns)
            if _is_numeric(column.type)
        }

    # -- epochs and progress -------------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Starts epoch ``epoch``: call it before each epoch, as with ``DistributedSampler``.
        Progress counters restart; resumption offsets from :meth:`load_state_dict` apply only to
        the epoch they were saved in."""
        if epoch != self.epoch:
            self._rows.zero_()
        self.epoch = int(epoch)

    def _rank_world(self) -> Tuple[int, int]:
        rank, world = _rank_and_world()
        rank = self.rank if self.rank is not None else rank
        world = self.world_size if self.world_size is not None else world
        if world < 1 or not 0 <= rank < world:
            raise ValueError(f"Invalid rank {rank} for world size {world}")
        return rank, world

    def state_dict(self) -> Dict[str, Any]:
        """This rank's progress in the current epoch: the epoch and, per shard of this rank (one
        per DataLoader worker), the rows consumed so far.

        **Provisional.** With ``num_workers > 0`` a worker counts the rows it has handed to the
        DataLoader, which may run ahead of the training loop by the DataLoader's prefetch
        (``prefetch_factor`` batches per worker), so resuming from it may skip those rows; with
        ``num_workers == 0`` the count is exact. Resuming needs the same world size and worker
        count (the same shards); exact resumption across world sizes comes with Floe's job
        protocol later, and this format may change with it.
        """
        rank, world = self._rank_world()
        workers = int(self._seen[0]) if int(self._seen[0]) > 0 else None
        shards: Dict[int, int] = {}
        if workers is not None:
            for worker in range(min(workers, self.max_workers)):
                shards[rank * workers + worker] = int(self._rows[worker])
        return {
            "version": 1,
            "dataset": self.dataset,
            "epoch": self.epoch,
            "rank": rank,
            "world_size": world,
            "num_workers": workers,
            "shard_count": world * workers if workers is not None else None,
            "rows_consumed": shards,
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resumes from :meth:`state_dict` (of this rank, or several ranks' ``rows_consumed``
        merged): the next iteration of the saved epoch starts each shard after its consumed rows.
        Provisional, like :meth:`state_dict`."""
        if state.get("version") != 1:
            raise ValueError(f"Unknown state version {state.get('version')!r}")
        self.epoch = int(state["epoch"])
        self._rows.zero_()
        self._resume = {
            "epoch": self.epoch,
            "shard_count": state.get("shard_count"),
            "rows": {int(k): int(v) for k, v in (state.get("rows_consumed") or {}).items()},
        }

    def _offset(self, shard_index: int, shard_count: int) -> int:
        resume = self._resume
        if not resume or resume["epoch"] != self.epoch or not resume["rows"]:
            return 0
        if resume["shard_count"] != shard_count:
            warnings.warn(
                f"Saved progress is for {resume['shard_count']} shards but this run reads "
                f"{shard_count} (another world size or worker count); epoch {self.epoch} starts "
                f"over. Exact resumption across world sizes is not supported yet."
            )
            return 0
        return resume["rows"].get(shard_index, 0)

    # -- iteration -----------------------------------------------------------------------------

    def shard(self) -> Tuple[int, int, int]:
        """(shard_index, shard_count, worker_id) of the calling process or DataLoader worker."""
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        rank, world = self._rank_world()
        return rank * workers + worker, world * workers, worker

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The record batches of this reader's shard (before :meth:`to_tensors`), resuming after
        the rows :meth:`load_state_dict` recorded; progress is counted as batches are taken."""
        shard_index, shard_count, worker = self.shard()
        if worker >= self.max_workers:
            raise ValueError(f"More DataLoader workers than max_workers={self.max_workers}")
        offset = self._offset(shard_index, shard_count)
        self._seen[0] = shard_count // self._rank_world()[1]
        self._seen[1] = self.epoch
        self._rows[worker] = offset
        client = FloeClient(self.address, **self.client_options)
        shard = client.read_shard(self.dataset, shard_index, shard_count, offset=offset)
        stream = shard
        try:
            if self.batch_size is not None:
                stream = _rebatch(shard, self.batch_size, self.drop_last)
            for batch in stream:
                if self.columns is not None:
                    batch = _select(batch, self.columns)
                # Counted before the consumer gets it: once next() returned, the batch is taken.
                self._rows[worker] += batch.num_rows
                yield batch
        finally:
            # Stop the prefetching threads before their connections close.
            for it in (stream, shard):
                close = getattr(it, "close", None)
                if close is not None:
                    close()
            client.close()

    def __iter__(self) -> Iterator[Any]:
        for batch in self.batches():
            yield self.to_tensors(batch)
