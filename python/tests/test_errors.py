"""floe.errors.translate on the exceptions pyarrow raises for each status (messages as pyarrow
words them for Floe's Java server; the live tests check the real ones)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from floe import errors as E


@pytest.mark.parametrize(
    "raised, expected, description",
    [
        (
            pa.ArrowInvalid("Flight returned invalid argument error, with message: Unknown column 'x'"),
            E.InvalidRequest,
            "Unknown column 'x'",
        ),
        (
            pa.ArrowKeyError("Flight returned not found error, with message: No dataset 'x'; load it first"),
            E.DatasetNotFound,
            "No dataset 'x'; load it first",
        ),
        (
            pa.ArrowKeyError(
                "Flight returned not found error, with message: Slice 'x/1/2' is not held by this node "
                "(dropped or moved); plan the read again. gRPC client debug context: NOT_FOUND:Slice. "
                "Client context: IOError: Server never sent a data message. Detail: Internal"
            ),
            E.SliceNotFound,
            "Slice 'x/1/2' is not held by this node (dropped or moved); plan the read again",
        ),
        (
            pa.ArrowKeyError("Flight returned not found error, with message: No Iceberg table at 'file:/t'"),
            E.NotFound,
            "No Iceberg table at 'file:/t'",
        ),
        (
            pa.ArrowInvalid(
                "gRPC returned precondition failed error, with message: Dataset 'x' is not ready: "
                "LOADING, 3 of 8 slices loaded"
            ),
            E.NotReady,
            "Dataset 'x' is not ready: LOADING, 3 of 8 slices loaded",
        ),
        (
            # How Arrow's Java client (or a proxy) may fold it: INVALID_ARGUMENT, same description.
            pa.ArrowInvalid(
                "Flight returned invalid argument error, with message: Dataset 'x' is not ready: "
                "LOADING, 3 of 8 slices loaded"
            ),
            E.NotReady,
            "Dataset 'x' is not ready: LOADING, 3 of 8 slices loaded",
        ),
        (
            pa.ArrowKeyError(
                "Flight returned not found error, with message: Unknown job 'j': register it first (register_job)"
            ),
            E.JobNotFound,
            "Unknown job 'j': register it first (register_job)",
        ),
        (
            pa.ArrowInvalid(
                "gRPC returned precondition failed error, with message: Dataset 'x' changed since job 'j' "
                "was planned (layout 1, now 2)"
            ),
            E.FailedPrecondition,
            "Dataset 'x' changed since job 'j' was planned (layout 1, now 2)",
        ),
        (
            pa.ArrowInvalid("gRPC returned resource exhausted error, with message: memory limit"),
            E.ResourceExhausted,
            "memory limit",
        ),
        (
            pa.ArrowException("Unknown: Flight returned already exists error, with message: other settings"),
            E.AlreadyExists,
            "other settings",
        ),
        (
            fl.FlightUnavailableError("Flight returned unavailable error, with message: failed to connect"),
            E.Unavailable,
            "failed to connect",
        ),
        (
            fl.FlightUnauthenticatedError("Flight returned unauthenticated error, with message: who?"),
            E.Unauthenticated,
            "who?",
        ),
        (
            fl.FlightUnauthorizedError("Flight returned unauthorized error, with message: access denied"),
            E.Unauthorized,
            "access denied",
        ),
        (fl.FlightTimedOutError("Flight returned timeout error, with message: stalled"), E.TimedOut, "stalled"),
        (fl.FlightCancelledError("Flight cancelled call, with message: stop"), E.Cancelled, "stop"),
        (fl.FlightInternalError("Flight returned internal error, with message: boom"), E.Internal, "boom"),
        (fl.FlightUnavailableError("odd wording"), E.Unavailable, "odd wording"),
    ],
)
def test_translate(raised, expected, description):
    error = E.translate(raised)
    assert type(error) is expected
    assert error.description == description
    assert description in str(error)
    assert error.cause is raised


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
        (E.Unavailable("gone"), True),
        (E.NotReady("loading"), True),
        (E.SliceNotFound("moved"), True),
        (E.NotFound("somewhere"), True),
        (E.TimedOut("stalled"), True),
        (E.Internal("reset"), True),
        (E.FloeError("unknown"), True),
        (E.DatasetNotFound("no dataset"), False),
        (E.JobNotFound("unknown job"), False),
        (E.FailedPrecondition("dataset changed"), False),
        (E.InvalidRequest("bad"), False),
        (E.ResourceExhausted("full"), False),
        (E.Unauthorized("denied"), False),
        (E.AlreadyExists("twice"), False),
    ],
)
def test_retryable(error, retryable):
    assert E.is_retryable(error) is retryable
