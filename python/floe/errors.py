"""Floe's errors as Python exceptions.

Every Floe failure reaches a client as a Flight/gRPC status whose description names what was
wrong (see ``docs/protocol.md``). pyarrow surfaces those statuses as a mix of exception types:

* Flight's own codes come with Arrow's status header and keep their Flight meaning:
  INVALID_ARGUMENT as ``pyarrow.ArrowInvalid`` ("Flight returned invalid argument error, with
  message: ..."), NOT_FOUND as ``pyarrow.ArrowKeyError``, ALREADY_EXISTS as a bare
  ``pyarrow.ArrowException``, UNAVAILABLE/UNAUTHENTICATED/UNAUTHORIZED/TIMED_OUT/CANCELLED/INTERNAL
  as the ``pyarrow.flight.Flight*Error`` classes.
* gRPC codes that Flight does not have arrive as plain gRPC statuses: FAILED_PRECONDITION (code 9,
  Floe's "dataset is not ready") and RESOURCE_EXHAUSTED both become ``pyarrow.ArrowInvalid`` with
  the message "gRPC returned precondition failed error, with message: ..." and "gRPC returned
  resource exhausted error, with message: ...".

:func:`translate` reads the kind out of the message (the exception class alone cannot tell
FAILED_PRECONDITION from INVALID_ARGUMENT) and raises the matching :class:`FloeError` subclass,
whose message is the server's description unchanged. FAILED_PRECONDITION is :class:`NotReady`
(retry later) when the description says "is not ready", else :class:`FailedPrecondition` (e.g. a
job whose dataset was loaded again differently: retrying does not help).
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "FloeError",
    "InvalidRequest",
    "NotFound",
    "DatasetNotFound",
    "SliceNotFound",
    "JobNotFound",
    "AlreadyExists",
    "FailedPrecondition",
    "NotReady",
    "ResourceExhausted",
    "Unauthenticated",
    "Unauthorized",
    "Unavailable",
    "TimedOut",
    "Cancelled",
    "Internal",
    "translate",
]


class FloeError(Exception):
    """A Floe call failed. ``code`` is the status (e.g. ``"NOT_FOUND"``), ``description`` the
    server's own words, ``cause`` the pyarrow exception it came from (if any)."""

    code = "UNKNOWN"

    def __init__(self, description: str, *, code: Optional[str] = None, cause: Optional[BaseException] = None):
        super().__init__(description)
        self.description = description
        if code is not None:
            self.code = code
        self.cause = cause

    def __str__(self) -> str:  # the server's description, prefixed by the status name
        return f"{self.code}: {self.description}"


class InvalidRequest(FloeError, ValueError):
    """INVALID_ARGUMENT: malformed JSON, unknown field or action, bad value, unknown column, bad
    filter or snapshot, shard index out of range."""

    code = "INVALID_ARGUMENT"


class NotFound(FloeError, LookupError):
    """NOT_FOUND: something named in the request does not exist (a table, a data file...)."""

    code = "NOT_FOUND"


class DatasetNotFound(NotFound):
    """NOT_FOUND: no dataset of that name is loaded (or it was dropped)."""


class SliceNotFound(NotFound):
    """NOT_FOUND for a ticket: the node no longer holds that slice (moved or dropped); plan the
    read again."""


class JobNotFound(NotFound):
    """NOT_FOUND: no training job of that id, or its entity was lost with its node ("unknown
    job"); register it again with the same spec and go on."""


class AlreadyExists(FloeError):
    """ALREADY_EXISTS: a dataset (or a training job) of that name exists with other settings."""

    code = "ALREADY_EXISTS"


class FailedPrecondition(FloeError):
    """FAILED_PRECONDITION (gRPC code 9) for a reason waiting will not cure, e.g. a job whose
    dataset was dropped and loaded again with another layout."""

    code = "FAILED_PRECONDITION"


class NotReady(FailedPrecondition):
    """FAILED_PRECONDITION (gRPC code 9) with "is not ready": the dataset is PLANNING or LOADING
    (or recovering); retry later, unchanged."""


class ResourceExhausted(FloeError):
    """RESOURCE_EXHAUSTED: the node's memory limit cannot hold the dataset."""

    code = "RESOURCE_EXHAUSTED"


class Unauthenticated(FloeError):
    """UNAUTHENTICATED: the caller's credentials were missing or refused."""

    code = "UNAUTHENTICATED"


class Unauthorized(FloeError):
    """UNAUTHORIZED (gRPC PERMISSION_DENIED): e.g. the object store refused the node's
    credentials."""

    code = "UNAUTHORIZED"


class Unavailable(FloeError, ConnectionError):
    """UNAVAILABLE: the node cannot be reached (down, refused, connection lost)."""

    code = "UNAVAILABLE"


class TimedOut(FloeError, TimeoutError):
    """TIMED_OUT / DEADLINE_EXCEEDED: the call or the stream took too long."""

    code = "TIMED_OUT"


class Cancelled(FloeError):
    """CANCELLED: the call was cancelled."""

    code = "CANCELLED"


class Internal(FloeError):
    """INTERNAL: the server (or the transport) failed."""

    code = "INTERNAL"


# "Flight returned not found error, with message: ..." / "gRPC returned precondition failed
# error, with message: ..." / "gRPC cancelled call, with message: ...", possibly behind a
# "Unknown: " status prefix that Arrow adds for codes it has no Python class for.
_MESSAGE = re.compile(
    r"^(?:[A-Za-z ]+: )?(?P<source>Flight|gRPC) (?:returned (?P<kind>[A-Za-z _-]+?) error|(?P<kind2>cancelled) call), "
    r"with message: (?P<description>.*)$",
    re.S,
)
# Arrow appends its client-side context to errors of streams; the server's words come before it.
_CONTEXT = re.compile(r"\. gRPC client debug context: .*$|\. Client context: .*$|\. Detail: [A-Za-z]+$", re.S)

_BY_KIND = {
    "invalid argument": InvalidRequest,
    "out-of-range": InvalidRequest,
    "not found": NotFound,
    "already exists": AlreadyExists,
    "precondition failed": FailedPrecondition,
    "resource exhausted": ResourceExhausted,
    "unauthenticated": Unauthenticated,
    "unauthorized": Unauthorized,
    "permission denied": Unauthorized,
    "unavailable": Unavailable,
    "timeout": TimedOut,
    "timed out": TimedOut,
    "deadline exceeded": TimedOut,
    "cancelled": Cancelled,
    "internal": Internal,
    "data loss": Internal,
    "aborted": Internal,
    "unknown": FloeError,
    "unimplemented": FloeError,
}


def _by_class(error: BaseException):
    """The Floe class for a pyarrow exception whose message did not say its kind."""
    try:
        import pyarrow as pa
        import pyarrow.flight as fl
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    for flight_class, floe_class in (
        (fl.FlightUnavailableError, Unavailable),
        (fl.FlightUnauthenticatedError, Unauthenticated),
        (fl.FlightUnauthorizedError, Unauthorized),
        (fl.FlightTimedOutError, TimedOut),
        (fl.FlightCancelledError, Cancelled),
        (fl.FlightInternalError, Internal),
        (fl.FlightError, FloeError),
        (pa.ArrowKeyError, NotFound),
        (pa.ArrowInvalid, InvalidRequest),
        (pa.ArrowIOError, FloeError),
    ):
        if isinstance(error, flight_class):
            return floe_class
    return None


def _refine_not_found(description: str):
    if description.startswith("No dataset ") or "was dropped" in description:
        return DatasetNotFound
    if description.startswith("Slice ") and "plan the read again" in description:
        return SliceNotFound
    if "unknown job" in description.lower():
        return JobNotFound
    return NotFound


def description_of(error: BaseException) -> str:
    """The server's description inside a pyarrow exception's message (the whole message when it
    has no recognisable shape)."""
    message = str(error)
    match = _MESSAGE.match(message)
    description = match.group("description") if match else message
    return _CONTEXT.sub("", description).strip()


def translate(error: BaseException) -> BaseException:
    """The :class:`FloeError` that a pyarrow exception stands for; other exceptions (and
    FloeErrors) come back unchanged."""
    if isinstance(error, FloeError):
        return error
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover
        return error
    if not isinstance(error, pa.ArrowException):
        return error
    message = str(error)
    match = _MESSAGE.match(message)
    description = description_of(error)
    floe_class = None
    if match:
        kind = (match.group("kind") or match.group("kind2") or "").lower()
        floe_class = _BY_KIND.get(kind)
    if floe_class is None:
        floe_class = _by_class(error)
    # Floe's wording is the last word: whatever class pyarrow picked, "is not ready" is the
    # FAILED_PRECONDITION of a dataset that is loading.
    if "is not ready" in description and floe_class in (None, InvalidRequest, FailedPrecondition, FloeError):
        floe_class = NotReady
    if floe_class is None:
        # Not a Flight status at all (e.g. a type or decoding error): nothing a retry can cure.
        return FloeError(description, code=type(error).__name__, cause=error)
    if floe_class is NotFound:
        floe_class = _refine_not_found(description)
    return floe_class(description, cause=error)


def is_retryable(error: BaseException) -> bool:
    """Failures that a new plan can cure: the node is gone or unreachable, it no longer holds the
    slice, the dataset is (re)loading, or the stream broke. A dataset that is not there at all,
    a bad request, or a memory or permission refusal will not change by retrying; nor will a
    job that is unknown until it is registered again (:class:`JobNotFound`)."""
    if isinstance(error, (DatasetNotFound, JobNotFound)):
        return False
    if isinstance(error, (NotReady, NotFound, Unavailable, TimedOut, Cancelled, Internal)):
        return True
    # A FloeError of no known kind (gRPC UNKNOWN), e.g. a stream cut by a dying node.
    return type(error) is FloeError and error.code == "UNKNOWN"
