"""Every message the Python client sends, the answers a node writes and the error details it sends
back validate against the protocol's published JSON Schema (docs/protocol.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import floe_client
from floe_client import FloeClient, JobSpec

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


@pytest.fixture(scope="module")
def schema():
    document = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(document)
    return document


def validator(schema, ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": ref, "$defs": schema["$defs"]})


class _Recording:
    """A FlightClient that keeps every action body and command descriptor it sends, and every
    action's answer as the node wrote it."""

    def __init__(self, real: fl.FlightClient, sent: list):
        self._real = real
        self._sent = sent

    def do_action(self, action, options=None):
        body = action.body.to_pybytes() if action.body is not None else b""
        self._sent.append(("action", action.type, body))
        results = list(self._real.do_action(action, options=options))
        self._sent.extend(("reply", action.type, r.body.to_pybytes()) for r in results)
        return iter(results)

    def get_flight_info(self, descriptor, options=None):
        if descriptor.descriptor_type == fl.DescriptorType.CMD:
            self._sent.append(("descriptor", None, descriptor.command))
        return self._real.get_flight_info(descriptor, options=options)

    def __getattr__(self, name):
        return getattr(self._real, name)


class RecordingClient(FloeClient):
    def __init__(self, address, **options):
        super().__init__(address, **options)
        self.sent: list = []

    def _flight(self, uri=None):
        return _Recording(super()._flight(uri), self.sent)


def test_the_clients_messages_follow_the_schema(address, sample_table, schema):
    with RecordingClient(address, timeout=120.0, patience=60.0) as client:
        client.load("schema-ds", str(sample_table), filter="id < 2000", columns=["id", "lang"], batch_rows=500)
        client.load("schema-ds", str(sample_table), filter="id < 2000", columns=["id", "lang"], batch_rows=500, snapshot="latest")
        client.status("schema-ds")
        client.refresh("schema-ds")
        client.list()
        client.cluster()
        list(client.read_shard("schema-ds", 1, 2))
        client.register_job("schema-job", "schema-ds", 100, seed=3, columns=["id"], tail="pad")
        client.job_status("schema-job", 0)
        client.list_jobs()
        for _ in client.read_job(JobSpec("schema-job", "schema-ds", 100, seed=3, columns=["id"], tail="pad"), 0, world_size=2, rank=1):
            pass
        client.register_job("schema-dyn", "schema-ds", 500, mode="dynamic", lease_timeout_ms=60000)
        for _ in client.read_dynamic("schema-dyn", 0, worker="w-1"):
            pass
        client.drop_job("schema-dyn")
        client.drop_job("schema-job")
        client.drop("schema-ds")
        sent = list(client.sent)

    actions = schema["x-floe-actions"]
    replies = schema["x-floe-replies"]
    kinds = set()
    answered = set()
    for kind, action, body in sent:
        if kind == "reply":
            if action in replies:
                validator(schema, replies[action]).validate(json.loads(body))
                answered.add(action)
        elif kind == "action":
            assert action in actions, f"the client sends an action the protocol does not have: {action}"
            message = json.loads(body) if body else {}
            validator(schema, actions[action]).validate(message)
            kinds.add(action)
        else:
            message = json.loads(body)
            assert message.get("kind") in ("job_read", "shard_read"), message
            ref = f"#/$defs/{message['kind']}"
            validator(schema, ref).validate(message)
            kinds.add(ref)
    expected = set(actions) | {"#/$defs/job_read", "#/$defs/shard_read"}
    assert kinds == expected, f"not exercised: {expected - kinds}"
    assert answered == set(replies), f"answers not seen: {set(replies) - answered}"


def test_a_failed_datasets_status_follows_the_schema(small_node, sample_table, schema):
    with RecordingClient(small_node.address, timeout=120.0) as client:
        with pytest.raises(floe_client.ResourceExhausted):
            client.load("schema-too-big", str(sample_table))
        client.status("schema-too-big")
        answers = [json.loads(body) for kind, action, body in client.sent if kind == "reply"]
    failed = answers[-1]
    validator(schema, "#/$defs/dataset_status").validate(failed)
    assert failed["state"] == "FAILED" and failed["error"]["kind"] == "RESOURCE_EXHAUSTED"


def test_a_nodes_error_details_follow_the_schema(address, schema):
    with fl.connect(address) as raw:
        with pytest.raises(fl.FlightError) as raised:
            raw.get_flight_info(fl.FlightDescriptor.for_path("no-such-dataset"))
    details = json.loads(raised.value.extra_info)
    validator(schema, "#/$defs/error_details").validate(details)
    assert details["code"] == "DATASET_NOT_FOUND"


def test_the_schema_refuses_what_the_node_refuses(schema):
    load = validator(schema, "#/$defs/load")
    for bad in (
        {"name": "x"},
        {"name": "x", "table": "/t", "colums": ["id"]},
        {"name": "", "table": "/t"},
        {"name": "x" * 129, "table": "/t"},
        {"name": "x", "table": "/t", "snapshot": "latest", "snapshot_id": 3},
    ):
        with pytest.raises(jsonschema.ValidationError):
            load.validate(bad)
    with pytest.raises(jsonschema.ValidationError):
        validator(schema, "#/$defs/register_job").validate({"job": "j", "dataset": "d", "batch_rows": 0})
