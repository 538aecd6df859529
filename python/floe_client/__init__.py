"""Floe's Python client: load Iceberg tables into a Floe cluster and read them over Arrow Flight.

``floe_client.FloeClient`` (datasets, and training jobs: ``register_job``, ``read_job``,
``read_dynamic``), ``floe_client.JobSpec`` and ``floe_client.read`` need only pyarrow;
``floe_client.torch.FloeIterableDataset`` and ``floe_client.torch.FloeDataLoader`` (imported on their own,
``from floe_client.torch import ...``) and ``floe_client.tensors`` (Arrow columns as tensors) need torch.
"""

from .client import FloeClient, Part, read
from .errors import (
    AlreadyExists,
    Cancelled,
    DatasetNotFound,
    FailedPrecondition,
    FloeError,
    Internal,
    InvalidRequest,
    JobNotFound,
    NotFound,
    NotReady,
    ResourceExhausted,
    SliceNotFound,
    TimedOut,
    Unauthenticated,
    Unauthorized,
    Unavailable,
    Unimplemented,
)
from .jobs import JobSpec, Lease
from .replies import ClusterView, DatasetStatus, JobStatus

__version__ = "0.1.0"

__all__ = [
    "FloeClient",
    "Part",
    "read",
    "JobSpec",
    "Lease",
    "ClusterView",
    "DatasetStatus",
    "JobStatus",
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
]
