"""A node with bearer tokens and no anonymous callers, through the Python client and plain pyarrow:
readers read and run jobs, only operators load, unknown or missing tokens are refused with codes;
an operator of another tenant cannot drop a dataset, nor another reader a job (PERMISSION_DENIED),
and status shows who owns them."""

from __future__ import annotations

import json

import pyarrow.flight as fl
import pytest

from conftest import Node
from floe_client import FloeClient, JobSpec
from floe_client.errors import Unauthenticated, Unauthorized, is_retryable, translate

OPERATOR = "py-operator-token-0123456789"
READER = "py-reader-token-0123456789"
OTHER_TENANT = "py-other-tenant-token-0123456789"
OTHER_READER = "py-other-reader-token-0123456789"


@pytest.fixture(scope="module")
def secured(classpath, tmp_path_factory, sample_table):
    directory = tmp_path_factory.mktemp("auth")
    tokens = directory / "tokens"
    # Lines of the old three-field form (the default tenant) beside lines naming a tenant.
    tokens.write_text(f"operator ops {OPERATOR}\nreader trainer {READER}\n"
                      f"operator team-b-ops {OTHER_TENANT} tenant=team-b\nreader other {OTHER_READER}\n")
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


def test_owners_and_the_changes_they_allow(secured):
    address, table = secured
    with FloeClient(address, token=OPERATOR) as operator:
        operator.load("owned", str(table), filter="id < 1000")
        assert operator.status("owned")["owner"] == {"tenant": "default", "caller": "ops"}
    with FloeClient(address, token=OTHER_TENANT) as other:
        with pytest.raises(Unauthorized) as denied:
            other.drop("owned")
        assert denied.value.floe_code == "PERMISSION_DENIED"
        assert "belongs to tenant 'default'" in denied.value.description
        assert "'team-b-ops' of tenant 'team-b'" in denied.value.description
    with FloeClient(address, token=READER) as reader, FloeClient(address, token=OTHER_READER) as other:
        reader.register_job("owned-job", "owned", 100)
        assert [j["owner"] for j in other.list_jobs() if j["job"] == "owned-job"] == [
            {"tenant": "default", "caller": "trainer"}]
        with pytest.raises(Unauthorized) as denied:
            other.drop_job("owned-job")
        assert denied.value.floe_code == "PERMISSION_DENIED" and "'owned-job'" in denied.value.description
        assert reader.drop_job("owned-job")["dropped"]


def test_a_ticket_is_bound_to_the_caller_that_planned_it(secured):
    """Another reader's valid ticket is refused (PERMISSION_DENIED, TICKET_WRONG_CALLER), which the
    client raises as Unauthorized; the planner's own ticket reads."""
    address, table = secured
    with FloeClient(address, token=OPERATOR) as operator:
        assert operator.load("bound", str(table), filter="id < 1000", batch_rows=250)["state"] == "READY"
    with FloeClient(address, token=READER) as reader:
        ticket = reader.plan("bound").endpoints[0].ticket
    assert json.loads(ticket.ticket)["caller"] == {"tenant": "default", "name": "trainer"}

    def do_get(token):
        options = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token.encode())])
        with fl.connect(address) as raw:
            return raw.do_get(ticket, options=options).read_all()

    assert do_get(READER).num_rows > 0
    with pytest.raises(fl.FlightUnauthorizedError) as raised:
        do_get(OTHER_READER)
    assert json.loads(raised.value.extra_info)["code"] == "TICKET_WRONG_CALLER"
    error = translate(raised.value)
    assert isinstance(error, Unauthorized) and not is_retryable(error)
    assert error.floe_code == "TICKET_WRONG_CALLER"
    assert "planned by 'trainer' of tenant 'default'" in error.description
    assert "'other' of tenant 'default'" in error.description
