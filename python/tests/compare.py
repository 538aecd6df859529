"""Row-by-row, value-by-value comparison of what Floe served with another reader's rows."""

from __future__ import annotations

import math
import uuid
from typing import Optional

import pyarrow as pa


def _normal(value):
    """UUIDs as bytes; NaN stays NaN (compared separately); containers recursively."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_normal(v) for v in value)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def _equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def same_rows(floe: Optional[pa.Table], reference: pa.Table, what: str) -> None:
    """Equal column names, row counts and values, rows in the same order (sort both by id first);
    NaN equals NaN at any depth, UUIDs compare as bytes, maps as their (key, value) lists."""
    if floe is None:
        assert reference.num_rows == 0, f"{what}: Floe served nothing, the reference {reference.num_rows} rows"
        return
    assert floe.column_names == reference.column_names, what
    assert floe.num_rows == reference.num_rows, (
        f"{what}: Floe served {floe.num_rows} rows, the reference {reference.num_rows}; "
        f"ids only in Floe: {sorted(set(floe['id'].to_pylist()) - set(reference['id'].to_pylist()))[:20]}, "
        f"only in the reference: {sorted(set(reference['id'].to_pylist()) - set(floe['id'].to_pylist()))[:20]}"
    )
    for name in floe.column_names:
        left, right = floe[name].to_pylist(), reference[name].to_pylist()
        for row, (a, b) in enumerate(zip(left, right)):
            a, b = _normal(a), _normal(b)
            assert _equal(a, b), f"{what}: column {name}, id {floe['id'][row]}: Floe {a!r}, reference {b!r}"
