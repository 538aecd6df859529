"""Typed views of the answers a Floe node writes (docs/protocol.md; the Java client's
``io.floe.protocol.DatasetStatusReply``). ``FloeClient`` hands back the node's JSON as dicts;
``DatasetStatus.of`` and ``JobStatus.of`` read them in one place, so a renamed field breaks here
and in its test, not silently in every caller. Fields a node adds later are left alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass(frozen=True)
class Error:
    """Why a load or a refresh failed: the failure's ``kind`` (``RESOURCE_EXHAUSTED``,
    ``NOT_FOUND``, ...) and a ``message`` for people."""

    kind: str
    message: str

    @classmethod
    def of(cls, reply: Optional[dict]) -> Optional["Error"]:
        return None if reply is None else cls(reply["kind"], reply["message"])


@dataclass(frozen=True)
class Source:
    """Where a dataset's table came from: a table in a catalog, or a location."""

    catalog: Optional[str] = None
    table: Optional[str] = None
    location: Optional[str] = None

    @classmethod
    def of(cls, reply: Optional[dict]) -> Optional["Source"]:
        if reply is None:
            return None
        return cls(reply.get("catalog"), reply.get("table"), reply.get("location"))

    def __str__(self) -> str:
        return f"{self.catalog}.{self.table}" if self.catalog else (self.location or "")


@dataclass(frozen=True)
class Owner:
    """Who loaded a dataset or registered a job: its caller's ``tenant`` and the ``caller``
    (a token file's name); ``caller`` is None for what was there before nodes kept owners."""

    tenant: str
    caller: Optional[str] = None

    @classmethod
    def of(cls, reply: Optional[dict]) -> Optional["Owner"]:
        return None if reply is None else cls(reply["tenant"], reply.get("caller"))

    def __str__(self) -> str:
        return f"{self.tenant}/{self.caller}" if self.caller else self.tenant


@dataclass(frozen=True)
class Refresh:
    """A dataset's last refresh: RUNNING, DONE, UNCHANGED or FAILED (with ``error``)."""

    state: str
    from_snapshot: int
    to_snapshot: Optional[int]
    slices_kept: int
    slices_loaded: int
    slices_freed: int
    seconds: float
    error: Optional[Error]

    @classmethod
    def of(cls, reply: Optional[dict]) -> Optional["Refresh"]:
        if reply is None:
            return None
        return cls(
            reply["state"], reply["from_snapshot"], reply.get("to_snapshot"), reply["slices_kept"],
            reply["slices_loaded"], reply["slices_freed"], reply["seconds"], Error.of(reply.get("error")),
        )


@dataclass(frozen=True)
class RetainedLayout:
    """An older layout of a dataset kept loaded because jobs still read it (``held_by``)."""

    snapshot_id: int
    fingerprint: Optional[str]
    slices: int
    rows: int
    held_by: List[str]

    @classmethod
    def of(cls, reply: dict) -> "RetainedLayout":
        return cls(reply["snapshot_id"], reply.get("fingerprint"), reply["slices"], reply["rows"],
                   list(reply.get("held_by") or []))


@dataclass(frozen=True)
class DatasetStatus:
    """A dataset's status, as ``load``, ``status``, ``drop``, ``refresh`` and ``list`` answer it.
    ``decoders`` counts the held slices each reader decoded (native, vectorized, generic, mixed)."""

    name: str
    state: str
    slices_loaded: int
    slices_total: int
    rows: int
    bytes: int
    source: Optional[Source] = None
    snapshot_id: Optional[int] = None
    seconds_to_ready: Optional[float] = None
    refresh: Optional[Refresh] = None
    error: Optional[Error] = None
    retained_layouts: List[RetainedLayout] = field(default_factory=list)
    decoders: Dict[str, int] = field(default_factory=dict)
    stale: bool = False
    dropped: bool = False
    owner: Optional[Owner] = None
    replicas: int = 1  # nodes holding each slice; 0 for ABSENT, 1 from nodes that predate replicas

    @classmethod
    def of(cls, reply: dict) -> "DatasetStatus":
        return cls(
            name=reply["name"], state=reply["state"], slices_loaded=reply["slices_loaded"],
            slices_total=reply["slices_total"], rows=reply["rows"], bytes=reply["bytes"],
            source=Source.of(reply.get("source")), snapshot_id=reply.get("snapshot_id"),
            seconds_to_ready=reply.get("seconds_to_ready"), refresh=Refresh.of(reply.get("refresh")),
            error=Error.of(reply.get("error")), decoders=dict(reply.get("decoders") or {}),
            retained_layouts=[RetainedLayout.of(layout) for layout in reply.get("retained_layouts") or []],
            stale=reply.get("stale", False), dropped=reply.get("dropped", False),
            owner=Owner.of(reply.get("owner")),
            replicas=int(reply.get("replicas", 0 if reply.get("state") == "ABSENT" else 1)),
        )

    @property
    def done(self) -> bool:
        """READY or FAILED: a load has nothing more to do."""
        return self.state in ("READY", "FAILED")


@dataclass(frozen=True)
class JobCounters:
    rows_leased: int
    rows_acknowledged: int
    rows_reissued: int
    leases_active: int

    @classmethod
    def of(cls, reply: dict) -> "JobCounters":
        return cls(reply["rows_leased"], reply["rows_acknowledged"], reply["rows_reissued"], reply["leases_active"])


@dataclass(frozen=True)
class EpochProgress:
    """A dynamic-mode epoch: its batches and how many are pending, leased and acknowledged."""

    epoch: int
    batches: int
    pending: int
    leased: int
    acknowledged: int

    @classmethod
    def of(cls, reply: dict) -> "EpochProgress":
        return cls(reply["epoch"], reply["batches"], reply["pending"], reply["leased"], reply["acknowledged"])


@dataclass(frozen=True)
class LayoutRun:
    """The dataset layout a job's epochs read from ``from_epoch`` on."""

    from_epoch: int
    layout: Optional[str]
    snapshot_id: int
    rows: int

    @classmethod
    def of(cls, reply: dict) -> "LayoutRun":
        return cls(reply["from_epoch"], reply.get("layout"), reply["snapshot_id"], reply["rows"])


@dataclass(frozen=True)
class JobStatus:
    """A training job's status, as ``register_job``, ``job_status``, ``drop_job`` and (one per job)
    ``list_jobs`` answer it: its settings, the layout of ``epoch``, counters and epochs."""

    job: str
    dataset: str
    mode: str
    batch_rows: int
    epoch: int
    rows: int
    batches_per_epoch: int
    layout: Optional[str]
    snapshot_id: Optional[int]
    counters: JobCounters
    layouts: List[LayoutRun] = field(default_factory=list)
    epochs: List[EpochProgress] = field(default_factory=list)
    settings: Dict[str, object] = field(default_factory=dict)
    dropped: bool = False
    owner: Optional[Owner] = None
    replicas: int = 1  # nodes holding each slice; 0 for ABSENT, 1 from nodes that predate replicas

    # The job's settings as register_job took them: kept whole in ``settings``.
    _SETTINGS = ("seed", "shuffle", "columns", "tail", "block_rows", "window_blocks", "run_rows", "lease_timeout_ms", "pin_layout")

    @classmethod
    def of(cls, reply: dict) -> "JobStatus":
        return cls(
            job=reply["job"], dataset=reply["dataset"], mode=reply["mode"], batch_rows=reply["batch_rows"],
            epoch=reply["epoch"], rows=reply["rows"], batches_per_epoch=reply["batches_per_epoch"],
            layout=reply.get("layout"), snapshot_id=reply.get("snapshot_id"),
            counters=JobCounters.of(reply["counters"]),
            layouts=[LayoutRun.of(run) for run in reply.get("layouts") or []],
            epochs=[EpochProgress.of(e) for e in reply.get("epochs") or []],
            settings={k: reply[k] for k in cls._SETTINGS if k in reply},
            dropped=reply.get("dropped", False),
            owner=Owner.of(reply.get("owner")),
            replicas=int(reply.get("replicas", 0 if reply.get("state") == "ABSENT" else 1)),
        )


@dataclass(frozen=True)
class Member:
    """A cluster member as the answering node sees it: address, Pekko status (Up, Joining, ...),
    roles."""

    address: str
    status: str
    roles: List[str] = field(default_factory=list)

    @classmethod
    def of(cls, reply: dict) -> "Member":
        return cls(reply["address"], reply["status"], list(reply.get("roles") or []))


@dataclass(frozen=True)
class NodeMemory:
    """The answering node's Arrow memory: what its slices and open streams hold of its limit."""

    arrow_allocated_bytes: int
    arrow_limit_bytes: int
    slices_held: int

    @classmethod
    def of(cls, reply: dict) -> "NodeMemory":
        return cls(reply["arrow_allocated_bytes"], reply["arrow_limit_bytes"], reply["slices_held"])


@dataclass(frozen=True)
class ClusterView:
    """The answer to ``cluster``: members, unreachable addresses, data nodes Up against the
    sharding minimum (``warning`` says why slices may not be placed), the answering node's memory."""

    self: str
    members: List[Member]
    unreachable: List[str]
    data_nodes_up: int
    min_data_nodes: int
    memory: NodeMemory
    warning: Optional[str] = None
    protocol_version: int = 1  # a node that does not say speaks version 1

    @classmethod
    def of(cls, reply: dict) -> "ClusterView":
        return cls(
            self=reply["self"], members=[Member.of(m) for m in reply.get("members") or []],
            unreachable=list(reply.get("unreachable") or []), data_nodes_up=reply["data_nodes_up"],
            min_data_nodes=reply["min_data_nodes"], memory=NodeMemory.of(reply["memory"]),
            warning=reply.get("warning"), protocol_version=int(reply.get("protocol_version", 1)),
        )


@dataclass(frozen=True)
class Leased:
    """A ``lease`` answer: global batch ``batch`` of ``epoch`` (``rows`` rows) is the worker's,
    as lease ``lease``, until it acknowledges it or the lease times out."""

    lease: str
    epoch: int
    batch: int
    rows: int


@dataclass(frozen=True)
class Wait:
    """A ``lease`` answer: every batch of the epoch is leased, some not yet acknowledged; ask
    again after ``retry_ms``."""

    retry_ms: int


@dataclass(frozen=True)
class Done:
    """A ``lease`` answer: every batch of the epoch is acknowledged."""


LEASE_STATUSES = ("leased", "wait", "done")


def lease_reply(reply: dict) -> "Leased | Wait | Done":
    """The typed ``lease`` answer (``status`` says which; the Java side's sealed
    ``io.floe.protocol.LeaseReply``).

    :raises ValueError: for a status this client does not know, naming it"""
    status = reply.get("status")
    if status == "leased":
        return Leased(str(reply["lease"]), int(reply["epoch"]), int(reply["batch"]), int(reply["rows"]))
    if status == "wait":
        return Wait(int(reply["retry_ms"]))
    if status == "done":
        return Done()
    raise ValueError(f"Unknown status {status!r} in a lease answer (one of {', '.join(LEASE_STATUSES)}): {reply}")


ACK_STATUSES = ("acknowledged", "expired", "duplicate")


def ack_status(reply: dict) -> str:
    """The ``status`` of an ``ack`` answer: ``acknowledged``, ``expired`` (the lease timed out; the
    batch was or will be handed to another worker) or ``duplicate`` (already acknowledged).

    :raises ValueError: for any other, naming it"""
    status = reply.get("status")
    if status not in ACK_STATUSES:
        raise ValueError(f"Unknown status {status!r} in an ack answer (one of {', '.join(ACK_STATUSES)}): {reply}")
    return status
