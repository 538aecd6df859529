"""The training snippets of README.md and python/README.md ("PyTorch"), taken from the files as
they stand, run as scripts (``python script.py``, as a reader who pasted them would) against a
real node, with only ``FLOE_ADDRESS`` set: each reads its epochs whole, and python/README's
resumes from the checkpoint it wrote."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("torch")

from floe_client import FloeClient  # noqa: E402
from conftest import ROWS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLICKS_ROWS = 3 * 4096


def snippet(readme: Path, after: str, containing: str) -> str:
    """The first ```python block after the line ``after`` that contains ``containing``."""
    text = readme.read_text()
    text = text[text.index(after):]
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        if containing in block:
            return block
    raise AssertionError(f"{readme.name} has no python block with {containing!r} after {after!r}")


def run_script(code: str, directory: Path, address: str) -> str:
    script = directory / "train.py"
    script.write_text(code)
    result = subprocess.run(
        [sys.executable, str(script)], cwd=directory, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, FLOE_ADDRESS=address),
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def clicks(address, tmp_path_factory) -> str:
    """``clicks`` (user_id, item_id, label), as README's `floe load clicks ...` leaves it."""
    from pyiceberg.catalog.sql import SqlCatalog

    root = tmp_path_factory.mktemp("clicks")
    catalog = SqlCatalog("readme", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=f"file://{root / 'warehouse'}")
    catalog.create_namespace("db")
    rows = pa.table({
        "user_id": pa.array([i % 977 for i in range(CLICKS_ROWS)], pa.int64()),
        "item_id": pa.array([i * 7 % 4001 for i in range(CLICKS_ROWS)], pa.int64()),
        "label": pa.array([i % 3 == 0 for i in range(CLICKS_ROWS)], pa.bool_()),
    })
    table = catalog.create_table("db.clicks", schema=rows.schema)
    table.append(rows)
    with FloeClient(address) as client:
        assert client.load("clicks", table.metadata_location, columns=["user_id", "item_id", "label"])["state"] == "READY"
    return "clicks"


@pytest.fixture(scope="module")
def reviews(address, sample_table) -> str:
    with FloeClient(address) as client:
        assert client.load("reviews", str(sample_table), columns=["rating", "text"])["state"] == "READY"
    return "reviews"


def test_the_readme_training_snippet_runs_as_a_script(address, clicks, tmp_path):
    code = snippet(ROOT / "README.md", "## Using it", "from floe_client.torch import")
    out = run_script(code, tmp_path, address)
    assert out.splitlines() == [f"epoch {e}: {CLICKS_ROWS} rows" for e in range(10)]


def test_the_python_readme_training_snippet_runs_and_resumes_from_its_checkpoint(address, reviews, tmp_path):
    code = snippet(ROOT / "python" / "README.md", "## PyTorch", "from floe_client.torch import")
    batches = ROWS // 1024
    first = run_script(code, tmp_path, address)
    assert first.splitlines() == [f"epoch {e}: {batches * 1024} rows" for e in range(3)]
    # The last checkpoint was written after batch 150 of epoch 2: a second run reads the rest.
    again = run_script(code, tmp_path, address)
    assert again.splitlines() == [f"epoch 2: {(batches - 150) * 1024} rows"]
