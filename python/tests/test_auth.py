"""A node with bearer tokens and no anonymous callers, through the Python client and plain pyarrow:
readers read and run jobs, only operators load, unknown or missing tokens are refused with codes."""

from __future__ import annotations

import json

import pyarrow.flight as fl
import pytest

from conftest import Node
from floe_client import FloeClient, JobSpec
from floe_client.errors import Unauthenticated, Unauthorized

OPERATOR = "py-operator-token-0123456789"
READER = "py-reader-token-0123456789"


@pytest.fixture(scope="module")
def secured(classpath, tmp_path_factory, sample_table):
    directory = tmp_path_factory.mktemp("auth")
    tokens = directory / "tokens"
    tokens.write_text(f"operator ops {OPERATOR}\nreader trainer {READER}\n")
    node = Node(classpath, directory / "node.log", settings={"floe.security.auth.tokens-file": str(tokens)})
    try:
        node.wait_ready()
        yield node.address, sample_table
    finally:
        node.stop()


def test_tokens_and_roles(secured, monkeypatch):
    address, table = secured
    monkeypatch.delenv("FLOE_TOKEN", raising=False)
    with FloeClient(address, token=OPERATOR) as operator:
        status = operator.load("secured", str(table), filter="id < 1000", batch_rows=250)
        assert status["state"] == "READY"
    with FloeClient(address, token=READER) as reader:
        rows = sum(batch.num_rows for batch in reader.read_shard("secured", 0, 1))
        assert rows == 1000
        spec = JobSpec("secured-job", "secured", 100)
        reader.register_job_spec(spec)
        assert sum(b.num_rows for _, b in reader.read_job(spec, 0)) == 1000
        with pytest.raises(Unauthorized) as denied:
            reader.drop("secured")
        assert denied.value.floe_code == "PERMISSION_DENIED"
        assert "needs the operator role" in denied.value.description
    monkeypatch.setenv("FLOE_TOKEN", READER)
    with FloeClient(address) as from_env:
        assert from_env.status("secured")["state"] == "READY"
    monkeypatch.delenv("FLOE_TOKEN")
    for token in (None, "not-a-known-token-0000"):
        with FloeClient(address, token=token, patience=1.0) as refused:
            with pytest.raises(Unauthenticated) as raised:
                refused.list()
            assert raised.value.floe_code == "UNAUTHENTICATED"


def test_plain_pyarrow_sees_the_code(secured):
    address, _ = secured
    with fl.connect(address) as raw:
        with pytest.raises(fl.FlightUnauthenticatedError) as raised:
            list(raw.do_action(fl.Action("list", b"")))
    assert json.loads(raised.value.extra_info)["code"] == "UNAUTHENTICATED"
    options = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + READER.encode())])
    with fl.connect(address) as raw:
        answer = json.loads(list(raw.do_action(fl.Action("list", b""), options=options))[0].body.to_pybytes())
    assert isinstance(answer, list)
