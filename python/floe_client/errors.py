"""Floe's errors as Python exceptions.

Every error a Floe node sends carries a machine-readable code (``DATASET_NOT_READY``,
``SLICE_NOT_HELD``, ``JOB_NOT_FOUND``, ...; see ``docs/protocol.md``) next to a transport status
and a description meant for people. pyarrow raises it as a ``pyarrow.flight.FlightError`` whose
``extra_info`` is ``{"code": "..."}``. :func:`translate` turns it into the :class:`FloeError`
subclass of its code, and :func:`is_retryable` decides from the code alone; the description is
never read to decide anything. An error with no code did not come from a node's handling of the
request (the connection failed, a stream was cut, another server answered): it is classified by
its transport status.
"""

from __future__ import annotations

import json
import re
from typing import Dict, Optional, Tuple, Type

import pyarrow.flight as fl

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
    "Unimplemented",
    "Internal",
    "RETRYABLE_CODES",
    "is_retryable",
    "translate",
]


class FloeError(Exception):
    """A Floe call failed. ``code`` is the status (e.g. ``"NOT_FOUND"``), ``floe_code`` the node's
    error code (e.g. ``"DATASET_NOT_FOUND"``; None when the error carried none), ``description``
    the server's own words, ``cause`` the pyarrow exception it came from (if any)."""

    code = "UNKNOWN"

    def __init__(
        self,
        description: str,
        *,
        code: Optional[str] = None,
        cause: Optional[BaseException] = None,
        floe_code: Optional[str] = None,
    ):
        super().__init__(description)
        self.description = description
        if code is not None:
            self.code = code
        self.cause = cause
        self.floe_code = floe_code

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


class Unimplemented(FloeError):
    """UNIMPLEMENTED: a Flight method Floe does not offer (DoPut, DoExchange); datasets come from
    tables, through ``load``."""

    code = "UNIMPLEMENTED"


class Internal(FloeError):
    """INTERNAL: the server (or the transport) failed."""

    code = "INTERNAL"


# The node's error codes: the exception class of each, and whether trying again (after planning
# again, with a back-off) can succeed without the caller changing anything.
_CODES: Dict[str, Tuple[Type[FloeError], bool]] = {
    "INVALID_REQUEST": (InvalidRequest, False),
    "UNAUTHENTICATED": (Unauthenticated, False),
    "PERMISSION_DENIED": (Unauthorized, False),
    "TICKET_INVALID": (Unauthenticated, False),
    "TICKET_WRONG_CALLER": (Unauthorized, False),
    "DATASET_NOT_FOUND": (DatasetNotFound, False),
    "DATASET_NOT_READY": (NotReady, True),
    "ALREADY_EXISTS": (AlreadyExists, False),
    "SLICE_NOT_HELD": (SliceNotFound, True),
    "LAYOUT_CHANGED": (FailedPrecondition, False),
    "JOB_NOT_FOUND": (JobNotFound, False),
    "LEASE_NOT_FOUND": (NotFound, False),
    "TABLE_NOT_FOUND": (NotFound, False),
    "STORAGE_ACCESS_DENIED": (Unauthorized, False),
    "STORAGE_UNAVAILABLE": (Unavailable, True),
    "UNREADABLE_DATA": (InvalidRequest, False),
    "MEMORY_EXHAUSTED": (ResourceExhausted, False),
    "NODE_STARTING": (Unavailable, True),
    "NODE_LEAVING": (Unavailable, True),
    "CLUSTER_TIMEOUT": (TimedOut, True),
    "STREAM_STALLED": (TimedOut, True),
    "CANCELLED": (Cancelled, True),
    "UNIMPLEMENTED": (Unimplemented, False),
    "INTERNAL": (Internal, True),
}

RETRYABLE_CODES = frozenset(code for code, (_, retryable) in _CODES.items() if retryable)

_DETAILS_KEY = "grpc-status-details-bin"


def code_from_details(details) -> Optional[str]:
    """The code in a node's error details (``{"code": "..."}``); None for anything else."""
    if not details:
        return None
    try:
        code = json.loads(bytes(details)).get("code")
    except (ValueError, TypeError, AttributeError):
        return None
    return code if isinstance(code, str) else None


# How Arrow words a status in the exception's message: "Flight returned not found error, with
# message: ..." / "gRPC returned precondition failed error, with message: ..." / "gRPC cancelled
# call, with message: ...", possibly behind a "Unknown: " prefix. Only the transport status is read
# from it (pyarrow has no exception class for some), and the server's description cut out of it.
_MESSAGE = re.compile(
    r"^(?:[A-Za-z ]+: )?(?P<source>Flight|gRPC) (?:returned (?P<kind>[A-Za-z _-]+?) error|(?P<kind2>cancelled) call), "
    r"with message: (?P<description>.*)$",
    re.S,
)
# Arrow appends its client-side context to errors of streams; the server's words come before it.
_CONTEXT = re.compile(r"\. gRPC client debug context: .*$|\. Client context: .*$|\. Detail: [A-Za-z]+$", re.S)

# The classes of transport statuses, for errors that carry no code.
_BY_STATUS = {
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
    "unimplemented": Unimplemented,
}


def _by_class(error: BaseException):
    """The Floe class for a pyarrow exception whose message did not name its status."""
    import pyarrow as pa

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


def description_of(error: BaseException) -> str:
    """The server's description inside a pyarrow exception's message (the whole message when it
    has no recognisable shape)."""
    message = str(error)
    match = _MESSAGE.match(message)
    description = match.group("description") if match else message
    return _CONTEXT.sub("", description).strip()


def translate(error: BaseException, code: Optional[str] = None) -> BaseException:
    """The :class:`FloeError` that a pyarrow exception stands for; other exceptions (and
    FloeErrors) come back unchanged. The class follows the error's code (``code`` when given, else
    the one in ``FlightError.extra_info``); an error without one gets the class of its transport
    status."""
    if isinstance(error, FloeError):
        return error
    import pyarrow as pa

    if not isinstance(error, pa.ArrowException):
        return error
    code = code or code_from_details(getattr(error, "extra_info", None))
    description = description_of(error)
    if code in _CODES:
        return _CODES[code][0](description, cause=error, floe_code=code)
    match = _MESSAGE.match(str(error))
    floe_class = None
    if match:
        floe_class = _BY_STATUS.get((match.group("kind") or match.group("kind2") or "").lower())
    if floe_class is None:
        floe_class = _by_class(error)
    if floe_class is None:
        # Not a Flight status at all (e.g. a type or decoding error): nothing a retry can cure.
        return FloeError(description, code=type(error).__name__, cause=error, floe_code=code)
    return floe_class(description, cause=error, floe_code=code)


def is_retryable(error: BaseException) -> bool:
    """Whether a new plan (or sending the action again) can cure the failure, by its code: the
    node is starting, it no longer holds the slice, the dataset is (re)loading, the storage or
    cluster did not answer. Without a code (the transport failed), a node that could not be
    reached, a call that timed out or was cut."""
    if not isinstance(error, FloeError):
        return False
    if error.floe_code is not None:
        return error.floe_code in RETRYABLE_CODES
    if isinstance(error, (Unavailable, TimedOut, Cancelled, Internal)):
        return True
    # A FloeError of no known kind (gRPC UNKNOWN), e.g. a stream cut by a dying node.
    return type(error) is FloeError and error.code == "UNKNOWN"
