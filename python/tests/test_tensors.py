"""floe_client.tensors: Arrow columns in the shapes models take, checked on arrays built here (values,
dtypes, and zero-copy by the tensor's address in Arrow's buffer), through FloeIterableDataset's
default to_tensors and DataLoader; and one embedding table written by PyIceberg, loaded with a
filter into a real node and read back as a shuffled job, against PyIceberg's scan."""

from __future__ import annotations

import functools
import pickle
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from torch.utils.data import DataLoader, IterableDataset  # noqa: E402
from torch.utils.data._utils.pin_memory import pin_memory  # noqa: E402

import floe_client.torch  # noqa: E402
from floe_client.tensors import (  # noqa: E402
    Jagged,
    Padded,
    arrow,
    batch_to_tensors,
    binary_rows,
    decode,
    fixed,
    jagged,
    padded,
    to_tensor,
)
from floe_client.torch import FloeDataLoader, FloeIterableDataset, arrow_to_tensor  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def address_of(tensor: torch.Tensor) -> int:
    return tensor.data_ptr()


def values_address(column: pa.Array, first: int, itemsize: int) -> int:
    """Where element ``first`` of a list column's child lives in Arrow's memory."""
    child = column.values
    return child.buffers()[1].address + (child.offset + first) * itemsize


def embeddings(rows: int, width: int, kind=pa.float32(), layout: str = "list") -> pa.Array:
    """``rows`` lists of ``width`` numbers counting up from 0, as ``list``, ``large_list`` or
    ``fixed_size_list``."""
    flat = pa.array(np.arange(rows * width), pa.int64()).cast(kind)
    offsets = pa.array(np.arange(0, rows * width + 1, width, dtype=np.int32))
    if layout == "list":
        return pa.ListArray.from_arrays(offsets, flat)
    if layout == "large_list":
        return pa.LargeListArray.from_arrays(offsets.cast(pa.int64()), flat)
    return pa.FixedSizeListArray.from_arrays(flat, width)


def expected(rows: range, width: int) -> list:
    return [[float(r * width + j) for j in range(width)] for r in rows]


# -- fixed-length lists -------------------------------------------------------------------------


@pytest.mark.parametrize("kind, itemsize", [(pa.float32(), 4), (pa.int64(), 8)])
def test_equal_length_lists_become_rows_by_length_views_of_arrows_buffer(kind, itemsize):
    column = embeddings(5, 3, kind)
    tensor = to_tensor(column)
    assert tensor.shape == (5, 3)
    assert tensor.dtype == (torch.float32 if kind == pa.float32() else torch.int64)
    assert tensor.tolist() == expected(range(5), 3)
    assert address_of(tensor) == values_address(column, 0, itemsize)
    assert torch.equal(fixed(column), tensor)


@pytest.mark.parametrize("layout", ["list", "large_list", "fixed_size_list"])
def test_a_sliced_column_starts_at_its_first_offset(layout):
    column = embeddings(6, 4, layout=layout).slice(2, 3)
    tensor = fixed(column)
    assert tensor.tolist() == expected(range(2, 5), 4)
    assert address_of(tensor) == values_address(column, 8, 4)  # row 2 of 4 floats


def test_a_child_array_with_its_own_offset():
    values = pa.array(np.arange(20, dtype=np.float32)).slice(5)  # the child starts at 5.0
    column = pa.ListArray.from_arrays(pa.array([0, 2, 4, 6], pa.int32()), values).slice(1)
    tensor = fixed(column)
    assert tensor.tolist() == [[7.0, 8.0], [9.0, 10.0]]
    assert address_of(tensor) == values.buffers()[1].address + 7 * 4


def test_fixed_size_lists_are_rows_by_their_size_also_when_sliced():
    column = embeddings(4, 2, layout="fixed_size_list")
    tensor = to_tensor(column.slice(1, 2))
    assert tensor.tolist() == expected(range(1, 3), 2)
    assert address_of(tensor) == column.values.buffers()[1].address + 2 * 4
    assert to_tensor(column.slice(0, 0)).shape == (0, 2)


def test_null_lists_are_rows_of_nan_and_null_elements_nan():
    floats = pa.array([[1.0, 2.0], None, [3.0, None]], pa.list_(pa.float32()))
    tensor = fixed(floats)
    assert tensor.dtype == torch.float32  # floats keep their dtype
    assert torch.equal(torch.isnan(tensor), torch.tensor([[False, False], [True, True], [False, True]]))
    assert tensor[0].tolist() == [1.0, 2.0] and tensor[2, 0] == 3.0
    ints = to_tensor(pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int64())))
    assert ints.dtype == torch.float64  # as a 1-d integer column with nulls
    assert ints[0].tolist() == [1.0, 2.0] and ints[2].tolist() == [3.0, 4.0] and bool(torch.isnan(ints[1]).all())
    sized = to_tensor(pa.array([None, [5, 6]], pa.list_(pa.int32(), 2)))
    assert sized.shape == (2, 2) and bool(torch.isnan(sized[0]).all()) and sized[1].tolist() == [5.0, 6.0]


def test_a_null_list_spanning_elements_does_not_shift_the_rows():
    # A null row whose offsets still span two elements (Arrow allows it): they are not its values.
    values = pa.array([1.0, 2.0, 99.0, 99.0, 3.0, 4.0], pa.float32())
    column = pa.ListArray.from_arrays(pa.array([0, 2, 4, 6], pa.int32()), values, mask=pa.array([False, True, False]))
    assert column.null_count == 1
    tensor = fixed(column)
    assert tensor[0].tolist() == [1.0, 2.0] and tensor[2].tolist() == [3.0, 4.0]
    assert bool(torch.isnan(tensor[1]).all())
    assert jagged(column).offsets.tolist() == [0, 2, 2, 4]


def test_empty_and_zero_row_columns_do_not_crash():
    assert to_tensor(pa.array([], pa.list_(pa.float32()))).shape == (0, 0)
    assert to_tensor(pa.array([[], []], pa.list_(pa.float32()))).shape == (2, 0)
    assert to_tensor(pa.array([None, None], pa.list_(pa.float32()))).shape == (2, 0)
    assert fixed(pa.array([[], None], pa.list_(pa.int64()))).shape == (2, 0)
    assert padded(pa.array([], pa.list_(pa.int64()))).values.shape == (0, 0)
    assert jagged(pa.array([], pa.list_(pa.int64()))).offsets.tolist() == [0]


def test_temporal_and_unsigned_elements_become_integers():
    stamps = pa.array([[0, 1_000_000]], pa.list_(pa.timestamp("us")))
    assert to_tensor(stamps).tolist() == [[0, 1_000_000]] and to_tensor(stamps).dtype == torch.int64
    assert to_tensor(pa.array([[1, 2]], pa.list_(pa.uint32()))).dtype == torch.int64
    assert to_tensor(pa.array([[True, False]], pa.list_(pa.bool_()))).tolist() == [[True, False]]


def test_fixed_refuses_ragged_lists_naming_the_column():
    column = pa.array([[1.0, 2.0], [3.0]], pa.list_(pa.float32()))
    with pytest.raises(ValueError, match=r"not of one length \(from 1 to 2\); use floe_client.tensors.jagged"):
        fixed(column)
    batch = pa.RecordBatch.from_pydict({"emb": column})
    with pytest.raises(ValueError, match=r"column 'emb' \(list<item: float>\): the rows' lists are not of one length"):
        batch_to_tensors(batch, {"emb": fixed})
    with pytest.raises(TypeError, match="takes a list of numbers"):
        fixed(pa.array([["a"]]))


# -- ragged lists -------------------------------------------------------------------------------


def test_ragged_lists_become_values_and_offsets_by_default():
    values = pa.array(np.arange(10, dtype=np.int64))
    column = pa.ListArray.from_arrays(pa.array([0, 1, 4, 4, 6, 10], pa.int32()), values).slice(1, 3)
    item = to_tensor(column)
    assert isinstance(item, Jagged)
    assert item.values.tolist() == [1, 2, 3, 4, 5]  # rows [1, 2, 3], [], [4, 5]
    assert item.offsets.tolist() == [0, 3, 3, 5] and item.offsets.dtype == torch.int64
    assert item.lengths.tolist() == [3, 0, 2]
    assert address_of(item.values) == values.buffers()[1].address + 1 * 8  # zero-copy
    assert [item.values[a:b].tolist() for a, b in zip(item.offsets[:-1], item.offsets[1:])] == [[1, 2, 3], [], [4, 5]]


def test_ragged_lists_with_nulls():
    item = jagged(pa.array([[1, None], None, [3]], pa.list_(pa.int32())))
    assert item.offsets.tolist() == [0, 2, 2, 3]  # a null list is an empty row
    assert item.values.dtype == torch.float64 and item.values[0] == 1 and bool(torch.isnan(item.values[1]))


def test_padded_lists_with_a_mask_keep_their_dtype():
    column = pa.array([[1, 2, 3], [4], None, [], [None, 6]], pa.list_(pa.int64()))
    result = padded(column, pad=-1)
    assert isinstance(result, Padded)
    assert result.values.dtype == torch.int64
    assert result.values.tolist() == [[1, 2, 3], [4, -1, -1], [-1, -1, -1], [-1, -1, -1], [-1, 6, -1]]
    assert result.mask.tolist() == [
        [True, True, True], [True, False, False], [False, False, False], [False, False, False], [False, True, False],
    ]
    assert padded(pa.array([[1.5], [2.0, 3.0]], pa.list_(pa.float32()))).values.tolist() == [[1.5, 0.0], [2.0, 3.0]]


# -- binary, strings and the rest ---------------------------------------------------------------


# Where "ghi" lies: after "abc" and "def", and after the null row's slot in a fixed-size column.
@pytest.mark.parametrize("kind, last", [(pa.binary(), 6), (pa.large_binary(), 6), (pa.binary(3), 9)])
def test_binary_rows_are_views_of_the_batch_buffer(kind, last):
    column = pa.array([b"abc", b"def", None, b"ghi"], kind).slice(1)
    data = column.buffers()[-1]
    views = list(binary_rows(column))
    assert views[1] is None
    assert [bytes(v) for v in (views[0], views[2])] == [b"def", b"ghi"]
    assert all(v.readonly for v in (views[0], views[2]))
    # The views point into Arrow's data buffer: nothing was copied.
    assert np.frombuffer(views[0], np.uint8).ctypes.data == data.address + 3
    assert np.frombuffer(views[2], np.uint8).ctypes.data == data.address + last


def pixels(row: memoryview) -> torch.Tensor:
    """A stand-in image decoder: the row's bytes as a uint8 tensor (module level: it pickles)."""
    return torch.from_numpy(np.frombuffer(row, np.uint8).copy())


def test_decode_calls_the_function_per_row_and_stacks_equal_shapes():
    seen = []

    def decoder(row):
        seen.append(np.frombuffer(row, np.uint8).ctypes.data)
        return pixels(row)

    column = pa.array([b"\x01\x02", b"\x03\x04", b"\x05\x06"])
    images = decode(decoder)(column)
    assert images.shape == (3, 2) and images.dtype == torch.uint8
    assert images.tolist() == [[1, 2], [3, 4], [5, 6]]
    base = column.buffers()[2].address
    assert seen == [base, base + 2, base + 4]  # each row handed over in place
    ragged = decode(pixels)(pa.array([b"\x01", None, b"\x02\x03"]))
    assert isinstance(ragged, list) and ragged[1] is None and ragged[2].tolist() == [2, 3]
    assert decode(pixels)(pa.array([], pa.binary())) == []
    as_arrays = decode(functools.partial(np.frombuffer, dtype=np.uint8))(column)
    assert isinstance(as_arrays, torch.Tensor) and as_arrays.shape == (3, 2)


def test_strings_decimals_structs_maps_and_nested_lists_stay_arrow():
    import decimal

    batch = pa.RecordBatch.from_pydict(
        {
            "text": pa.array(["a", None, "ccc"]),
            "price": pa.array([decimal.Decimal("1.50")] * 3, pa.decimal128(9, 2)),
            "addr": pa.array([{"city": "Oslo", "zip": 1}] * 3),
            "tags": pa.array([[("k", 1)]] * 3, pa.map_(pa.string(), pa.int32())),
            "words": pa.array([["x"], [], None]),
            "nested": pa.array([[[1.0]], [[2.0]], [[3.0]]]),
        }
    )
    item = batch_to_tensors(batch)
    assert list(item) == batch.schema.names
    for name, column in zip(batch.schema.names, batch.columns):
        assert isinstance(item[name], pa.Array) and item[name].equals(column)
    assert item["text"].buffers()[2].address == batch.column(0).buffers()[2].address  # not copied


def test_column_transforms_choose_per_column_and_none_leaves_out():
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2]),
            "emb": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32())),
            "tokens": pa.array([[1, 2, 3], [4]]),
            "img": pa.array([b"\x01", b"\x02"]),
            "text": pa.array(["a", "b"]),
        }
    )
    item = batch_to_tensors(
        batch,
        {"emb": jagged, "tokens": functools.partial(padded, pad=-1), "img": decode(pixels), "text": None, "id": arrow},
    )
    assert set(item) == {"id", "emb", "tokens", "img"}
    assert isinstance(item["id"], pa.Array)
    assert item["emb"].offsets.tolist() == [0, 2, 4]
    assert item["tokens"].values.tolist() == [[1, 2, 3], [4, -1, -1]]
    assert item["img"].tolist() == [[1], [2]]
    with pytest.raises(ValueError, match="names columns the batch does not have: label; it has: id, emb"):
        batch_to_tensors(batch, {"label": fixed})


def test_one_dimensional_columns_as_before():
    column = pa.array(range(1000), pa.int64())
    assert address_of(arrow_to_tensor(column)) == column.buffers()[1].address
    assert address_of(to_tensor(column.slice(10))) == column.buffers()[1].address + 80
    with_nulls = to_tensor(pa.array([1, None, 3], pa.int32()))
    assert with_nulls.dtype == torch.float64 and bool(torch.isnan(with_nulls[1]))
    booleans = to_tensor(pa.array([True, None]))  # was a TypeError (a NumPy object array)
    assert booleans.dtype == torch.float64 and booleans[0] == 1.0 and bool(torch.isnan(booleans[1]))
    assert to_tensor(pa.chunked_array([[1, 2], [3]])).tolist() == [1, 2, 3]


# -- FloeIterableDataset and DataLoader ---------------------------------------------------------


def embedding_batch(rows: int = 6, width: int = 8) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            "label": pa.array([i % 2 for i in range(rows)], pa.int32()),
            "emb": embeddings(rows, width),
            "tokens": pa.array([[1] * (i % 3) for i in range(rows)], pa.list_(pa.int64())),
            "text": pa.array([f"row {i}" for i in range(rows)]),
        }
    )


def offline_dataset(monkeypatch, **kwargs) -> FloeIterableDataset:
    """A dataset whose cluster is nowhere: any attempt to reach it fails the test."""

    def no_client(*args, **kwargs):
        raise AssertionError("the dataset contacted the cluster")

    monkeypatch.setattr(floe_client.torch, "FloeClient", no_client)
    return FloeIterableDataset("grpc+tcp://127.0.0.1:9", "embeddings", "job", 6, rank=0, world_size=1, **kwargs)


def test_default_to_tensors_gives_rows_by_length_for_an_embedding_column(monkeypatch):
    data = offline_dataset(monkeypatch)
    batch = embedding_batch()
    item = data.to_tensors(batch)
    assert item["emb"].shape == (6, 8) and item["emb"].dtype == torch.float32
    assert item["emb"].tolist() == expected(range(6), 8)
    assert address_of(item["emb"]) == values_address(batch.column(2), 0, 4)
    assert item["id"].tolist() == list(range(6)) and item["label"].dtype == torch.int32
    assert isinstance(item["tokens"], Jagged)
    assert isinstance(item["text"], pa.Array)
    assert not data._registered


def test_column_transforms_on_the_dataset(monkeypatch):
    data = offline_dataset(monkeypatch, columns=["id", "emb", "tokens"], column_transforms={"tokens": padded, "id": None})
    batch = embedding_batch().select(["id", "emb", "tokens"])
    item = data.to_tensors(batch)
    assert set(item) == {"emb", "tokens"} and isinstance(item["tokens"], Padded)
    with pytest.raises(ValueError, match="names columns the job does not read: label; it reads: id, emb"):
        offline_dataset(monkeypatch, columns=["id", "emb"], column_transforms={"label": fixed})
    with pytest.raises(TypeError, match=r"column_transforms\['emb'\] must be a function"):
        offline_dataset(monkeypatch, column_transforms={"emb": "fixed"})


def test_a_dataset_with_transforms_pickles_for_spawned_workers(monkeypatch):
    data = offline_dataset(
        monkeypatch, column_transforms={"emb": fixed, "tokens": functools.partial(padded, pad=-1), "text": decode(pixels)}
    )
    copy = pickle.loads(pickle.dumps(data))
    item = copy.to_tensors(embedding_batch())
    assert item["emb"].shape == (6, 8) and item["tokens"].values.shape == (6, 2)
    assert item["text"].shape == (6, 5)  # "row i" as 5 bytes each


class Batches(IterableDataset):
    """Record batches through batch_to_tensors, as FloeIterableDataset hands them out."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def __iter__(self):
        for batch in self.batches:
            yield batch_to_tensors(batch)


def test_items_with_arrow_and_jagged_values_pass_dataloader_and_pinning(monkeypatch):
    items = list(DataLoader(Batches([embedding_batch(), embedding_batch(4)]), batch_size=None, pin_memory=True))
    assert [item["emb"].shape for item in items] == [(6, 8), (4, 8)]
    assert isinstance(items[0]["tokens"], Jagged) and isinstance(items[0]["text"], pa.Array)
    # This machine may have no CUDA (DataLoader then skips pinning): pin as DataLoader and
    # FloeDataLoader's LeasedBatch would, with a pin_memory that only marks the tensor.
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self, device=None: self.clone().fill_(0) if self.is_floating_point() else self.clone())
    for pin in (pin_memory, floe_client.torch._pinned):
        pinned = pin(items[0])
        assert bool((pinned["emb"] == 0).all())
        assert isinstance(pinned["tokens"], Jagged) and pinned["tokens"].offsets.tolist() == items[0]["tokens"].offsets.tolist()
        assert pinned["text"] is items[0]["text"]
    # A worker hands items over by pickling.
    copy = pickle.loads(pickle.dumps(items[0]))
    assert copy["text"].equals(items[0]["text"]) and torch.equal(copy["emb"], items[0]["emb"])


def test_a_spawned_worker_hands_over_arrow_and_jagged_values():
    loader = DataLoader(Batches([embedding_batch()]), batch_size=None, num_workers=1, multiprocessing_context="spawn")
    (item,) = list(loader)
    assert item["emb"].tolist() == expected(range(6), 8)
    assert isinstance(item["tokens"], Jagged) and item["tokens"].lengths.tolist() == [0, 1, 2, 0, 1, 2]
    assert item["text"].to_pylist() == [f"row {i}" for i in range(6)]


# -- end to end ---------------------------------------------------------------------------------

WIDTH = 64


@pytest.mark.skipif(
    not (ROOT / "tools" / "target" / "runtime-classpath.txt").exists(), reason="needs the Java build (a real node)"
)
def test_an_embedding_table_loaded_with_a_filter_reads_as_rows_by_64_tensors(address, client, tmp_path):
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("ml", uri=f"sqlite:///{tmp_path / 'ml.db'}", warehouse=f"file://{tmp_path / 'warehouse'}")
    catalog.create_namespace("db")
    schema = pa.schema([("id", pa.int64()), ("label", pa.int32()), ("emb", pa.list_(pa.float32()))])
    table = catalog.create_table("db.embeddings", schema=schema)
    rng = np.random.default_rng(19)
    for start in (0, 600):  # two appends, two files
        ids = np.arange(start, start + 600)
        vectors = rng.standard_normal((600, WIDTH), dtype=np.float32)
        table.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "label": pa.array(ids % 3 == 0, pa.bool_()).cast(pa.int32()),
                    "emb": pa.ListArray.from_arrays(pa.array(np.arange(0, 600 * WIDTH + 1, WIDTH, dtype=np.int32)), vectors.ravel()),
                },
                schema=schema,
            )
        )
    reference = table.scan(row_filter="label = 1", selected_fields=("id", "emb", "label")).to_arrow()
    want = dict(zip(reference.column("id").to_pylist(), reference.column("emb").to_pylist()))
    assert len(want) == 400

    status = client.load("embeddings", table.metadata_location, filter="label = 1", columns=["id", "emb", "label"])
    try:
        assert status["state"] == "READY" and status["rows"] == 400, status
        data = FloeIterableDataset(
            address, "embeddings", "embeddings-job", 80, seed=5, shuffle=True, columns=["id", "emb", "label"],
            rank=0, world_size=1,
        )
        seen = []
        for item in FloeDataLoader(data, num_workers=0):
            assert item["emb"].shape == (80, WIDTH) and item["emb"].dtype == torch.float32
            assert item["label"].tolist() == [1] * 80
            for row_id, vector in zip(item["id"].tolist(), item["emb"]):
                assert vector.tolist() == want[row_id], row_id
            seen.extend(item["id"].tolist())
        assert sorted(seen) == sorted(want)
    finally:
        client.drop_job("embeddings-job")
        client.drop("embeddings")
