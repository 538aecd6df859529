"""floe_client.errors.translate on the exceptions pyarrow raises for each status (messages as pyarrow
words them for Floe's Java server; the live tests check the real ones)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from floe_client import errors as E


@pytest.mark.parametrize(
    "raised, code, expected, description",
    [
        (
            pa.ArrowInvalid("Flight returned invalid argument error, with message: Unknown column 'x'"),
            "INVALID_REQUEST",
            E.InvalidRequest,
            "Unknown column 'x'",
        ),
        (
            pa.ArrowKeyError("Flight returned not found error, with message: No dataset 'x'; load it first"),
            "DATASET_NOT_FOUND",
            E.DatasetNotFound,
            "No dataset 'x'; load it first",
        ),
        (
            pa.ArrowKeyError(
                "Flight returned not found error, with message: Slice 'x/1/2' is not held by this node "
                "(dropped or moved); plan the read again. gRPC client debug context: NOT_FOUND:Slice. "
                "Client context: IOError: Server never sent a data message. Detail: Internal"
            ),
            "SLICE_NOT_HELD",
            E.SliceNotFound,
            "Slice 'x/1/2' is not held by this node (dropped or moved); plan the read again",
        ),
        (
            pa.ArrowKeyError("Flight returned not found error, with message: No Iceberg table at 'file:/t'"),
            "TABLE_NOT_FOUND",
            E.NotFound,
            "No Iceberg table at 'file:/t'",
        ),
        (
            pa.ArrowInvalid(
                "gRPC returned precondition failed error, with message: Dataset 'x' is not ready: "
                "LOADING, 3 of 8 slices loaded"
            ),
            "DATASET_NOT_READY",
            E.NotReady,
            "Dataset 'x' is not ready: LOADING, 3 of 8 slices loaded",
        ),
        (
            # The code decides, whatever the wording: a reworded message changes nothing.
            pa.ArrowInvalid("gRPC returned precondition failed error, with message: Still warming up"),
            "DATASET_NOT_READY",
            E.NotReady,
            "Still warming up",
        ),
        (
            pa.ArrowKeyError(
                "Flight returned not found error, with message: Unknown job 'j': register it first (register_job)"
            ),
            "JOB_NOT_FOUND",
            E.JobNotFound,
            "Unknown job 'j': register it first (register_job)",
        ),
        (
            pa.ArrowInvalid(
                "gRPC returned precondition failed error, with message: Dataset 'x' changed since job 'j' "
                "was planned (layout 1, now 2)"
            ),
            "LAYOUT_CHANGED",
            E.FailedPrecondition,
            "Dataset 'x' changed since job 'j' was planned (layout 1, now 2)",
        ),
        (
            pa.ArrowInvalid("gRPC returned resource exhausted error, with message: memory limit"),
            "MEMORY_EXHAUSTED",
            E.ResourceExhausted,
            "memory limit",
        ),
        (
            pa.ArrowException("Unknown: Flight returned already exists error, with message: other settings"),
            "ALREADY_EXISTS",
            E.AlreadyExists,
            "other settings",
        ),
        (
            fl.FlightTimedOutError("Flight returned timeout error, with message: stalled", b'{"code":"STREAM_STALLED"}'),
            None,  # read from extra_info
            E.TimedOut,
            "stalled",
        ),
        (
            fl.FlightUnauthenticatedError(
                "Flight returned unauthenticated error, with message: Invalid ticket: forged",
                b'{"code":"TICKET_INVALID"}',
            ),
            None,
            E.Unauthenticated,
            "Invalid ticket: forged",
        ),
        # As pyarrow raises a node's error whose status it has no FlightError class for: the class
        # says "internal", the message keeps the status, the code decides.
        (
            fl.FlightInternalError(
                "Flight returned not found error, with message: No dataset 'x'; load it first",
                b'{"code":"DATASET_NOT_FOUND"}',
            ),
            None,
            E.DatasetNotFound,
            "No dataset 'x'; load it first",
        ),
        (
            fl.FlightInternalError(
                "gRPC returned precondition failed error, with message: Dataset 'x' is not ready",
                b'{"code":"DATASET_NOT_READY"}',
            ),
            None,
            E.NotReady,
            "Dataset 'x' is not ready",
        ),
        # No code: the transport's status decides.
        (
            pa.ArrowInvalid("Flight returned invalid argument error, with message: Dataset 'x' is not ready"),
            None,
            E.InvalidRequest,
            "Dataset 'x' is not ready",
        ),
        (
            fl.FlightUnavailableError("Flight returned unavailable error, with message: failed to connect"),
            None,
            E.Unavailable,
            "failed to connect",
        ),
        (
            fl.FlightUnauthorizedError("Flight returned unauthorized error, with message: access denied"),
            None,
            E.Unauthorized,
            "access denied",
        ),
        (fl.FlightCancelledError("Flight cancelled call, with message: stop"), None, E.Cancelled, "stop"),
        (fl.FlightInternalError("Flight returned internal error, with message: boom"), None, E.Internal, "boom"),
        (fl.FlightUnavailableError("odd wording"), None, E.Unavailable, "odd wording"),
        (pa.ArrowKeyError("Flight returned not found error, with message: gone"), None, E.NotFound, "gone"),
    ],
)
def test_translate(raised, code, expected, description):
    error = E.translate(raised, code)
    assert type(error) is expected
    assert error.description == description
    assert description in str(error)
    assert error.cause is raised
    if code is not None:
        assert error.floe_code == code


def test_an_unknown_code_falls_back_on_the_status():
    error = E.translate(pa.ArrowKeyError("Flight returned not found error, with message: x"), "SOMETHING_NEWER")
    assert type(error) is E.NotFound
    assert not E.is_retryable(error)


def test_other_exceptions_pass_through():
    error = ValueError("x")
    assert E.translate(error) is error
    floe_error = E.NotReady("y")
    assert E.translate(floe_error) is floe_error


def test_non_flight_arrow_errors_are_not_retried():
    error = E.translate(pa.ArrowTypeError("bad type"))
    assert type(error) is E.FloeError
    assert error.code == "ArrowTypeError"
    assert not E.is_retryable(error)


@pytest.mark.parametrize(
    "error, retryable",
    [
        (E.NotReady("loading", floe_code="DATASET_NOT_READY"), True),
        (E.SliceNotFound("moved", floe_code="SLICE_NOT_HELD"), True),
        (E.Unavailable("starting", floe_code="NODE_STARTING"), True),
        (E.Unavailable("store down", floe_code="STORAGE_UNAVAILABLE"), True),
        (E.TimedOut("cluster", floe_code="CLUSTER_TIMEOUT"), True),
        (E.Internal("bug", floe_code="INTERNAL"), True),
        (E.DatasetNotFound("no dataset", floe_code="DATASET_NOT_FOUND"), False),
        (E.JobNotFound("unknown job", floe_code="JOB_NOT_FOUND"), False),
        (E.NotFound("no table", floe_code="TABLE_NOT_FOUND"), False),
        (E.FailedPrecondition("dataset changed", floe_code="LAYOUT_CHANGED"), False),
        (E.InvalidRequest("bad", floe_code="INVALID_REQUEST"), False),
        (E.ResourceExhausted("full", floe_code="MEMORY_EXHAUSTED"), False),
        (E.Unauthorized("denied", floe_code="STORAGE_ACCESS_DENIED"), False),
        (E.AlreadyExists("twice", floe_code="ALREADY_EXISTS"), False),
        # Without a code, by the transport status: unreachable, timed out, cut.
        (E.Unavailable("gone"), True),
        (E.TimedOut("stalled"), True),
        (E.Internal("reset"), True),
        (E.FloeError("unknown"), True),
        (E.NotFound("somewhere"), False),
        (E.InvalidRequest("bad"), False),
    ],
)
def test_retryable(error, retryable):
    assert E.is_retryable(error) is retryable


def _published_error_details():
    import json
    from pathlib import Path

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json").read_text())
    return schema["$defs"]["error_details"]


def test_the_client_knows_every_published_code():
    published = _published_error_details()["properties"]["code"]["enum"]
    assert sorted(E._CODES) == sorted(published)


def test_the_client_retries_exactly_the_published_retryable_codes():
    assert E.RETRYABLE_CODES == frozenset(_published_error_details()["x-floe-retryable"])
