"""Arrow columns as torch tensors, in the shapes models take.

:func:`to_tensor` is what :meth:`floe_client.torch.FloeIterableDataset.to_tensors` does to each column
unless ``column_transforms`` names another function for it:

* numeric, boolean and temporal columns: a 1-d tensor (:func:`arrow_to_tensor`);
* lists of numbers (``list``, ``large_list``, ``fixed_size_list``) whose rows all have one length
  ``L``: a ``(rows, L)`` tensor (:func:`fixed`). Iceberg has no fixed-size list, so Floe serves
  embeddings as plain ``list<float>``: the length is read from the offsets, batch by batch;
* other lists of numbers (ragged): :class:`Jagged` values and offsets (:func:`jagged`);
* everything else (strings, binary, decimals, structs, maps, lists of those): the ``pyarrow.Array``
  itself, for the user to map (:func:`decode` calls a function on each binary row).

A null number becomes NaN, so integer and boolean values with nulls become float64 (as a 1-d
integer column with nulls always has); a null list is a row of NaN in a fixed-length column and an
empty row in a ragged one; :func:`padded` instead keeps the dtype and marks nulls in its mask.
NaN rather than an error because one null must not stop an epoch, and NaN shows in the loss at
once; a load with ``filter="emb is not null"`` keeps such rows out.

Every function takes one ``pyarrow.Array`` (a ``ChunkedArray`` is combined first), so any of them
is a value for ``column_transforms``; a dataset read by spawned DataLoader workers is pickled, so
use module-level functions or ``functools.partial`` there, not lambdas.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

__all__ = [
    "to_tensor",
    "arrow_to_tensor",
    "fixed",
    "jagged",
    "padded",
    "decode",
    "binary_rows",
    "arrow",
    "batch_to_tensors",
    "Jagged",
    "Padded",
    "Decoder",
]

Column = Union[pa.Array, pa.ChunkedArray]
Transform = Callable[[pa.Array], Any]

# torch has no unsigned types wider than 8 bits (before 2.3); those become int64.
_WIDEN = (pa.uint16(), pa.uint32(), pa.uint64())


class Jagged(NamedTuple):
    """A ragged list column: row ``i`` is ``values[offsets[i]:offsets[i + 1]]``. ``offsets`` is
    int64, ``rows + 1`` long and starts at 0, as torch's jagged layout
    (``torch.nested.nested_tensor_from_jagged``, torch >= 2.3) and torchrec take it."""

    values: torch.Tensor
    offsets: torch.Tensor

    @property
    def lengths(self) -> torch.Tensor:
        """Each row's length (torchrec's ``lengths``)."""
        return self.offsets[1:] - self.offsets[:-1]


class Padded(NamedTuple):
    """A list column padded to its longest row: ``values`` is ``(rows, longest)``; ``mask`` is
    True where ``values`` holds an element (False for padding and for null elements)."""

    values: torch.Tensor
    mask: torch.Tensor


# -- 1-d columns ------------------------------------------------------------------------------


def _is_numeric(kind: pa.DataType) -> bool:
    return (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or (pa.types.is_temporal(kind) and not pa.types.is_interval(kind))
    )


def _is_list(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)


def _one_chunk(column: Column) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _plain(column: pa.Array) -> pa.Array:
    """``column`` as a type torch has: temporal types as their integer representation (a view,
    no copy), unsigned types wider than 8 bits as int64."""
    kind = column.type
    if (
        pa.types.is_timestamp(kind)
        or pa.types.is_duration(kind)
        or pa.types.is_date64(kind)
        or kind in (pa.time64("us"), pa.time64("ns"))
    ):
        return column.view(pa.int64())
    if pa.types.is_date32(kind) or pa.types.is_time32(kind):
        return column.view(pa.int32())
    if kind in _WIDEN:
        return column.cast(pa.int64())
    return column


def _numpy(column: pa.Array) -> np.ndarray:
    """A view of Arrow's buffer where the layout allows it (primitive, no nulls), else a copy
    with NaN for the nulls (float64 for integers and booleans)."""
    column = _plain(column)
    if column.null_count == 0 and not pa.types.is_boolean(column.type):
        return column.to_numpy(zero_copy_only=True)
    if column.null_count and pa.types.is_boolean(column.type):
        column = column.cast(pa.float64())  # numpy would make an object array of it
    return column.to_numpy(zero_copy_only=False)


def _tensor(array: np.ndarray) -> torch.Tensor:
    if not array.flags.writeable:
        # Arrow's buffers are immutable; torch warns about sharing a read-only array. The tensor
        # shares Arrow's memory (writing into it in place would change the batch).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            return torch.from_numpy(array)
    return torch.from_numpy(np.ascontiguousarray(array))


def arrow_to_tensor(column: Column) -> torch.Tensor:
    """One numeric, boolean or temporal Arrow column as a 1-d tensor: zero-copy from Arrow's
    buffer where the layout allows (primitive types without nulls), otherwise a copy. Temporal
    columns become their integer representation (timestamps: int64 in their unit since the epoch).
    Integer and boolean columns with nulls become float64 with NaN for the nulls."""
    return _tensor(_numpy(_one_chunk(column)))


# -- lists of numbers -------------------------------------------------------------------------


class _Parts(NamedTuple):
    """A list column taken apart (its elements copied only when a row is null): ``flat``, the
    elements of its non-null rows in order; ``lengths``, each row's (int64, 0 for a null row); ``valid``, which rows
    are not null (None: all); ``width``, the one length every non-null row has (None: ragged)."""

    flat: pa.Array
    lengths: np.ndarray
    valid: Optional[np.ndarray]
    width: Optional[int]


def _numeric_list(column: Column, what: str) -> pa.Array:
    column = _one_chunk(column)
    kind = column.type
    if not (_is_list(kind) and _is_numeric(kind.value_type)):
        raise TypeError(f"{what} takes a list of numbers, booleans or temporal values, not {kind}")
    return column


def _list_parts(column: pa.Array) -> _Parts:
    rows = len(column)
    valid = None if column.null_count == 0 else column.is_valid().to_numpy(zero_copy_only=False)
    if pa.types.is_fixed_size_list(column.type):
        lengths = np.full(rows, column.type.list_size, dtype=np.int64)
        # Without nulls a slice of the child, at the array's offset times the size.
        flat = column.flatten() if valid is None else None
    else:
        # The offsets of this array's rows (they follow its slice offset): rows + 1 of them.
        offsets = column.offsets.to_numpy(zero_copy_only=False)
        lengths = np.diff(offsets).astype(np.int64, copy=False)
        # The child is not sliced with the array: its rows' elements start at the first offset.
        first = int(offsets[0]) if rows else 0
        flat = column.values.slice(first, int(lengths.sum())) if valid is None else None
    if valid is not None:
        # A null row may still span elements; list_flatten leaves them out (a copy).
        lengths[~valid] = 0
        flat = pc.list_flatten(column)
    if len(flat) != int(lengths.sum()):
        raise ValueError(f"the list offsets do not match its elements ({len(flat)} elements, lengths summing to {int(lengths.sum())})")
    if pa.types.is_fixed_size_list(column.type):
        return _Parts(flat, lengths, valid, column.type.list_size)
    present = lengths if valid is None else lengths[valid]
    width = int(present[0]) if present.size else 0
    return _Parts(flat, lengths, valid, width if bool((present == width).all()) else None)


def _matrix(parts: _Parts) -> torch.Tensor:
    rows, width = len(parts.lengths), parts.width
    if parts.valid is None:
        # Zero-copy when the elements have no nulls: a view of the child's buffer, reshaped.
        return arrow_to_tensor(parts.flat).reshape(rows, width)
    values = _numpy(parts.flat)
    if not np.issubdtype(values.dtype, np.floating):
        values = values.astype(np.float64)
    out = np.full((rows, width), np.nan, dtype=values.dtype)
    out[parts.valid] = values.reshape(int(parts.valid.sum()), width)
    return torch.from_numpy(out)


def _jagged(parts: _Parts) -> Jagged:
    offsets = np.zeros(len(parts.lengths) + 1, dtype=np.int64)
    np.cumsum(parts.lengths, out=offsets[1:])
    return Jagged(arrow_to_tensor(parts.flat), torch.from_numpy(offsets))


def fixed(column: Column) -> torch.Tensor:
    """A list column whose non-null rows all have one length ``L`` as a ``(rows, L)`` tensor.

    Zero-copy (a view of Arrow's buffer) when neither the lists nor their elements have nulls and
    the element type is primitive; otherwise a copy in which nulls are NaN (a null list is a row
    of NaN; integer and boolean elements then become float64). Rows that are all null or empty
    give ``(rows, 0)`` (``(rows, size)`` for a ``fixed_size_list``). Raises ValueError when the
    rows' lengths differ: use :func:`jagged` or :func:`padded` for such a column."""
    parts = _list_parts(_numeric_list(column, "fixed"))
    if parts.width is None:
        lengths = parts.lengths if parts.valid is None else parts.lengths[parts.valid]
        raise ValueError(
            f"the rows' lists are not of one length (from {int(lengths.min())} to "
            f"{int(lengths.max())}); use floe_client.tensors.jagged or floe_client.tensors.padded"
        )
    return _matrix(parts)


def jagged(column: Column) -> Jagged:
    """A list column as :class:`Jagged` values (1-d, the rows' elements in order) and offsets
    (int64, ``rows + 1``, from 0). ``values`` is a view of Arrow's buffer when neither the lists
    nor their elements have nulls; a null list is an empty row and null elements are NaN (integer
    and boolean elements then become float64)."""
    return _jagged(_list_parts(_numeric_list(column, "jagged")))


def padded(column: Column, pad: Any = 0) -> Padded:
    """A list column as :class:`Padded`: ``values`` ``(rows, longest row)`` in the elements' own
    dtype (no NaN needed), ``pad`` (cast to it) after each row's end and in place of null
    elements, where ``mask`` is False. A null list is a row of padding. Always a copy. Another
    pad value in ``column_transforms``: ``functools.partial(padded, pad=-1)``."""
    parts = _list_parts(_numeric_list(column, "padded"))
    rows = len(parts.lengths)
    width = int(parts.lengths.max()) if rows else 0
    mask = np.arange(width) < parts.lengths[:, None]
    flat = _plain(parts.flat)
    present = None
    if flat.null_count:
        present = flat.is_valid().to_numpy(zero_copy_only=False)
        flat = flat.fill_null(pa.scalar(0).cast(flat.type))
    values = flat.to_numpy(zero_copy_only=False)
    out = np.full((rows, width), pad, dtype=values.dtype)
    out[mask] = values
    if present is not None:
        keep = mask.copy()
        keep[mask] = present
        out[mask & ~keep] = pad
        mask = keep
    return Padded(torch.from_numpy(out), torch.from_numpy(mask))


# -- binary -----------------------------------------------------------------------------------


def binary_rows(column: Column) -> Iterator[Optional[memoryview]]:
    """Each row of a binary or string column (also ``large_*`` and ``fixed_size_binary``) as a
    read-only ``memoryview`` of Arrow's data buffer, None for a null row. Nothing is copied: a
    view is a window on the batch's memory (``numpy.frombuffer(view, numpy.uint8)`` reads it in
    place; ``bytes(view)`` copies one row)."""
    column = _one_chunk(column)
    if isinstance(column, pa.ExtensionArray):  # uuid: fixed_size_binary(16) underneath
        column = column.storage
    kind, rows, start = column.type, len(column), column.offset
    if rows == 0:
        return
    buffers = column.buffers()
    if pa.types.is_fixed_size_binary(kind):
        bounds = ((start + np.arange(rows + 1, dtype=np.int64)) * kind.byte_width).tolist()
        data = buffers[1]
    elif pa.types.is_binary(kind) or pa.types.is_string(kind):
        bounds = np.frombuffer(buffers[1], np.int32, rows + 1, start * 4).tolist()
        data = buffers[2]
    elif pa.types.is_large_binary(kind) or pa.types.is_large_string(kind):
        bounds = np.frombuffer(buffers[1], np.int64, rows + 1, start * 8).tolist()
        data = buffers[2]
    else:
        raise TypeError(f"binary_rows takes a binary or string column, not {kind}")
    # Read-only whatever the buffer: a write through a view would change the batch.
    view = (memoryview(data) if data is not None else memoryview(b"")).toreadonly()
    valid = None if column.null_count == 0 else column.is_valid().to_pylist()
    for i in range(rows):
        yield view[bounds[i] : bounds[i + 1]] if valid is None or valid[i] else None


def _stacked(results: List[Any]) -> Any:
    """One tensor if every result is a tensor (or NumPy array) of one shape and dtype, else the
    list as it is."""
    if results and all(isinstance(r, torch.Tensor) for r in results):
        first = results[0]
        if all(r.shape == first.shape and r.dtype == first.dtype for r in results):
            return torch.stack(results)
    elif results and all(isinstance(r, np.ndarray) for r in results):
        first = results[0]
        if first.dtype != object and all(r.shape == first.shape and r.dtype == first.dtype for r in results):
            return torch.from_numpy(np.stack(results))
    return results


class Decoder:
    """A column transform that calls ``fn`` on each row's bytes (see :func:`decode`). A class
    rather than a closure so that a dataset holding it pickles into spawned workers."""

    def __init__(self, fn: Callable[[memoryview], Any]):
        if not callable(fn):
            raise TypeError(f"decode takes a function of a row's bytes, not {fn!r}")
        self.fn = fn

    def __call__(self, column: Column) -> Any:
        fn = self.fn
        return _stacked([None if row is None else fn(row) for row in binary_rows(column)])

    def __repr__(self) -> str:
        return f"decode({self.fn!r})"


def decode(fn: Callable[[memoryview], Any]) -> Decoder:
    """A column transform for binary columns (images, audio, serialized features): ``fn`` gets each
    row as a read-only ``memoryview`` of the batch's buffer (:func:`binary_rows`; no copy of the
    batch), null rows are not decoded (None). The results are stacked into one tensor when they
    are all tensors (or NumPy arrays) of one shape and dtype, else returned as a list."""
    return Decoder(fn)


# -- whole batches ----------------------------------------------------------------------------


def arrow(column: Column) -> pa.Array:
    """The column as it is: a transform that keeps a column Arrow whatever its type."""
    return column


def to_tensor(column: Column) -> Any:
    """The default mapping: a 1-d tensor for a numeric, boolean or temporal column; for a list of
    those, a ``(rows, L)`` tensor when its non-null rows all have length ``L`` in this batch, else
    :class:`Jagged`; any other column stays a ``pyarrow.Array``. A list column that may be
    ragged in one batch and of one length in another is better named in ``column_transforms``
    (:func:`jagged` or :func:`padded`), so that every batch has one form."""
    column = _one_chunk(column)
    kind = column.type
    if _is_numeric(kind):
        return arrow_to_tensor(column)
    if _is_list(kind) and _is_numeric(kind.value_type):
        parts = _list_parts(column)
        return _matrix(parts) if parts.width is not None else _jagged(parts)
    return column


def _checked_transforms(transforms: Optional[Mapping[str, Optional[Transform]]]) -> Dict[str, Optional[Transform]]:
    """``transforms`` as a dict, after checking that each value is a function or None."""
    checked = dict(transforms or {})
    for name, transform in checked.items():
        if transform is not None and not callable(transform):
            raise TypeError(f"column_transforms[{name!r}] must be a function of a pyarrow.Array or None, not {transform!r}")
    return checked


def batch_to_tensors(
    batch: pa.RecordBatch, column_transforms: Optional[Mapping[str, Optional[Transform]]] = None
) -> Dict[str, Any]:
    """``{column: value}`` for one record batch: each column through its function in
    ``column_transforms`` (None leaves the column out), the others through :func:`to_tensor`.
    Raises ValueError if ``column_transforms`` names a column the batch does not have; an error in
    a transform is raised again with the column's name."""
    transforms = column_transforms or {}
    missing = [name for name in transforms if name not in batch.schema.names]
    if missing:
        raise ValueError(
            f"column_transforms names columns the batch does not have: {', '.join(missing)}; "
            f"it has: {', '.join(batch.schema.names)}"
        )
    item: Dict[str, Any] = {}
    for field, column in zip(batch.schema, batch.columns):
        transform = transforms.get(field.name, to_tensor)
        if transform is None:
            continue
        try:
            item[field.name] = transform(column)
        except (TypeError, ValueError) as e:
            again = TypeError if isinstance(e, TypeError) else ValueError
            raise again(f"column {field.name!r} ({field.type}): {e}") from e
    return item
