"""The distribution as pip builds it: its metadata, license, entry point and type marker."""

from __future__ import annotations

import email
import pathlib
import subprocess
import sys
import zipfile

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", str(out),
         str(PYTHON_DIR)],
        check=True, timeout=300,
    )
    (built,) = out.glob("floe_client-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def dist_info(wheel: zipfile.ZipFile, name: str) -> str:
    (path,) = [n for n in wheel.namelist() if n.endswith(f".dist-info/{name}")]
    return wheel.read(path).decode()


def test_metadata_names_the_distribution_its_license_and_pythons(wheel):
    metadata = email.message_from_string(dist_info(wheel, "METADATA"))
    assert metadata["Name"] == "floe-client"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.9"
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.13" in classifiers
    requires = metadata.get_all("Requires-Dist")
    assert any(r.startswith("pyarrow") for r in requires)
    assert any(r.startswith("torch") and 'extra == "torch"' in r for r in requires)
    assert metadata.get_payload().lstrip().startswith("#")  # the README is the long description


def test_wheel_carries_the_license_type_marker_and_command(wheel):
    names = wheel.namelist()
    assert "floe_client/py.typed" in names
    license_text = dist_info(wheel, "licenses/LICENSE")
    assert "Apache License" in license_text and "Version 2.0" in license_text
    assert "floe = floe_client.cli:run" in dist_info(wheel, "entry_points.txt")
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n]


def test_wheel_installs_one_package_of_its_own_name(wheel):
    # PyPI's `floe` and `floe-python` both install a top-level `floe/`: a wheel that did too would
    # overwrite or be overwritten by either (issue 24). .ci/python-install installs all three.
    tops = {n.split("/")[0] for n in wheel.namelist() if ".dist-info/" not in n}
    assert tops == {"floe_client"}
