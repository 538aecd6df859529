"""Floe's Python client: load Iceberg tables into a Floe cluster and read them over Arrow Flight.

``floe.FloeClient`` and ``floe.read`` need only pyarrow; ``floe.torch.FloeIterableDataset``
(imported on its own, ``from floe.torch import FloeIterableDataset``) needs torch.
"""

from .client import FloeClient, Part, read
from .errors import (
    AlreadyExists,
    Cancelled,
    DatasetNotFound,
    FloeError,
    Internal,
    InvalidRequest,
    NotFound,
    NotReady,
    ResourceExhausted,
    SliceNotFound,
    TimedOut,
    Unauthenticated,
    Unauthorized,
    Unavailable,
)

__version__ = "0.1.0"

__all__ = [
    "FloeClient",
    "Part",
    "read",
    "FloeError",
    "InvalidRequest",
    "NotFound",
    "DatasetNotFound",
    "SliceNotFound",
    "AlreadyExists",
    "NotReady",
    "ResourceExhausted",
    "Unauthenticated",
    "Unauthorized",
    "Unavailable",
    "TimedOut",
    "Cancelled",
    "Internal",
]
