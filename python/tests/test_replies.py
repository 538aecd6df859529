"""The Python client's typed replies (floe_client.replies) read what a real node answers: every field it
sends is read, under the name and type the node uses."""

from __future__ import annotations

import dataclasses

import pytest

from floe_client import DatasetStatus, FloeClient, JobStatus, ResourceExhausted
from floe_client.replies import ClusterView, Done, Error, Leased, Owner, Source, Wait, ack_status, lease_reply
from conftest import JOB_ROWS


def _names(cls) -> set:
    return {f.name for f in dataclasses.fields(cls)}


def test_a_ready_datasets_status(address, sample):
    with FloeClient(address) as client:
        reply = client.status(sample)
        listed = [r for r in client.list() if r["name"] == sample]
    status = DatasetStatus.of(reply)
    assert (status.name, status.state, status.rows, status.bytes) == (sample, "READY", reply["rows"], reply["bytes"])
    assert status.slices_loaded == status.slices_total == reply["slices_total"] > 0
    assert status.snapshot_id == reply["snapshot_id"] and status.seconds_to_ready == reply["seconds_to_ready"]
    assert status.source == Source(location=reply["source"]["location"]) and str(status.source).endswith("sample")
    assert status.error is None and status.done and not status.stale
    # Anonymous callers (the test node's) are one caller of the default tenant.
    assert status.owner == Owner("default", "anonymous") and str(status.owner) == "default/anonymous"
    assert DatasetStatus.of(listed[0]) == status
    assert sum(status.decoders.values()) == status.slices_total
    assert set(reply) <= _names(DatasetStatus), set(reply) - _names(DatasetStatus)


def test_a_failed_datasets_error(small_node, sample_table):
    with FloeClient(small_node.address, timeout=120) as client:
        with pytest.raises(ResourceExhausted):
            client.load("replies-too-big", str(sample_table))
        reply = client.status("replies-too-big")
    status = DatasetStatus.of(reply)
    assert status.state == "FAILED" and status.done
    assert status.error == Error("RESOURCE_EXHAUSTED", reply["error"]["message"])
    assert "memory limit" in status.error.message


def test_a_jobs_status(address, job_data):
    with FloeClient(address) as client:
        client.register_job("replies-job", job_data, 1000, mode="dynamic", seed=5)
        try:
            lease = client.lease("replies-job", 0, worker="w")
            reply = client.job_status("replies-job", 0)
            listed = [j for j in client.list_jobs() if j["job"] == "replies-job"]
        finally:
            dropped = client.drop_job("replies-job")
    status = JobStatus.of(reply)
    assert (status.job, status.dataset, status.mode, status.batch_rows) == ("replies-job", job_data, "dynamic", 1000)
    assert status.epoch == 0 and status.rows == reply["rows"] > 0 and status.layout == reply["layout"]
    assert status.batches_per_epoch == reply["rows"] // 1000
    assert status.settings["seed"] == 5 and status.settings["tail"] == "drop"
    assert status.counters.rows_leased == lease["rows"] and status.counters.leases_active == 1
    assert [e.epoch for e in status.epochs] == [0] and status.epochs[0].leased == 1
    assert JobStatus.of(listed[0]).job == "replies-job" and JobStatus.of(dropped).dropped
    assert [(run.from_epoch, run.layout) for run in status.layouts] == [(0, status.layout)]
    assert status.owner == Owner("default", "anonymous")
    assert set(reply) <= _names(JobStatus) | set(JobStatus._SETTINGS), set(reply) - _names(JobStatus)


def test_the_cluster_view(address, sample):
    with FloeClient(address) as client:
        reply = client.cluster()
    view = ClusterView.of(reply)
    assert [m.status for m in view.members] == ["Up"] and view.unreachable == []
    assert view.self == view.members[0].address and view.data_nodes_up == 1 >= view.min_data_nodes
    assert view.memory.slices_held > 0 and 0 < view.memory.arrow_allocated_bytes <= view.memory.arrow_limit_bytes
    assert view.warning is None
    assert set(reply) <= _names(ClusterView), set(reply) - _names(ClusterView)


def test_lease_and_ack_answers(address, job_data):
    """Every status a real node answers to ``lease`` and ``ack`` reads as its type, with every
    field it sends."""
    with FloeClient(address) as client:
        client.register_job("replies-leases", job_data, JOB_ROWS // 2, mode="dynamic", lease_timeout_ms=60_000)
        try:
            answers = [client.lease("replies-leases", 0, worker="w") for _ in range(3)]
            first, second, third = (lease_reply(a) for a in answers)
            assert isinstance(first, Leased) and isinstance(second, Leased) and {first.batch, second.batch} == {0, 1}
            assert set(answers[0]) - {"status"} == _names(Leased)
            assert first.rows == JOB_ROWS // 2 and first.epoch == 0 and first.lease == answers[0]["lease"]
            assert isinstance(third, Wait) and third.retry_ms == answers[2]["retry_ms"] > 0
            assert set(answers[2]) - {"status"} == _names(Wait)
            acks = [client.ack("replies-leases", 0, lease.lease, "w") for lease in (first, second, first)]
            # Acknowledging a lease again is idempotent (test_jobs); the node answers it the same way.
            assert [ack_status(a) for a in acks] == ["acknowledged"] * 3
            assert lease_reply(client.lease("replies-leases", 0, worker="w")) == Done()
        finally:
            client.drop_job("replies-leases")
    with pytest.raises(ValueError, match="'lent'"):
        lease_reply({"status": "lent"})
    with pytest.raises(ValueError, match="'maybe'"):
        ack_status({"status": "maybe"})
