"""acknowledge() keeps a data node's loss away from the training loop: answers a retry can cure
are tried again within the client's patience; the rest reach the caller."""

from __future__ import annotations

import pytest

from floe_client import errors as E
from floe_client.jobs import Lease, acknowledge

LEASE = Lease(job="j", epoch=0, batch=3, id="0:3:1", worker="w", rows=10)


class FakeClient:
    patience = 5.0

    def __init__(self, failures):
        self.failures = list(failures)
        self.calls = 0

    def ack(self, job, epoch, lease, worker):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return {"status": "acknowledged"}


def test_retryable_failures_are_tried_again(monkeypatch):
    monkeypatch.setattr("floe_client.jobs.backoff", lambda attempt: 0.01)
    client = FakeClient(
        [
            E.TimedOut("The cluster did not answer in time", floe_code="CLUSTER_TIMEOUT"),
            E.Unavailable("Connection refused"),
        ]
    )
    assert acknowledge(client, LEASE) == {"status": "acknowledged"}
    assert client.calls == 3


def test_an_unknown_lease_is_reported_not_raised():
    client = FakeClient([E.NotFound("Job 'j' issued no lease '0:3:1'", floe_code="LEASE_NOT_FOUND")])
    assert acknowledge(client, LEASE)["status"] == "unknown"


def test_other_failures_reach_the_caller(monkeypatch):
    monkeypatch.setattr("floe_client.jobs.backoff", lambda attempt: 0.01)
    client = FakeClient([E.InvalidRequest("Invalid job id", floe_code="INVALID_REQUEST")])
    with pytest.raises(E.InvalidRequest):
        acknowledge(client, LEASE)
    assert client.calls == 1


def test_patience_bounds_the_retries(monkeypatch):
    monkeypatch.setattr("floe_client.jobs.backoff", lambda attempt: 0.5)
    client = FakeClient([E.Unavailable("down")] * 100)
    client.patience = 1.0
    with pytest.raises(E.Unavailable):
        acknowledge(client, LEASE)
    assert client.calls <= 3
