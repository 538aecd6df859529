"""A Python client for Floe over Arrow Flight (``pyarrow.flight``).

Actions (``load``, ``status``, ``drop``, ``list``, ``cluster``) go to the node the client was
given; reads fetch each endpoint from the node the endpoint names, one ``FlightClient`` per node.
:meth:`FloeClient.read_shard` survives nodes coming and going: when an endpoint's stream fails
because its node left, died, no longer holds the slice or the dataset is reloading, it plans the
same shard again, finds the same slice rows at their new holder, skips what it already yielded and
goes on, so every row of the shard is yielded exactly once and in the dataset's global order.
"""

from __future__ import annotations

import collections
import datetime as _dt
import json
import logging
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa
import pyarrow.flight as fl

from ._retry import backoff as _backoff
from .errors import (
    DatasetNotFound,
    FloeError,
    JobNotFound,
    Unavailable,
    is_retryable,
    translate,
)
from .jobs import CHUNK_BATCHES_DEFAULT, STREAMS_DEFAULT, JobSpec, Lease, default_worker_name, read_dynamic, read_epoch

__all__ = ["FloeClient", "read", "Part"]

LOG = logging.getLogger("floe_client")

DEFAULT_PORT = 47470
_REUSE_CONNECTION = "arrow-flight-reuse-connection"


def _normalize(address: Union[str, fl.Location]) -> str:
    """``host:port``, ``host`` or a Flight URI → a ``grpc+tcp://host:port`` URI."""
    if isinstance(address, fl.Location):
        uri = address.uri
        return uri.decode() if isinstance(uri, bytes) else str(uri)
    address = str(address).strip()
    if "://" in address:
        return address
    if ":" not in address:
        address = f"{address}:{DEFAULT_PORT}"
    return f"grpc+tcp://{address}"


def _pem(name: str, value: Union[str, bytes, os.PathLike]) -> bytes:
    """PEM bytes given as such or as a file's path."""
    if isinstance(value, bytes):
        return value
    try:
        with open(value, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"Unreadable {name} file {str(value)!r}: {e.strerror}") from e


@dataclass(frozen=True)
class Part:
    """What one endpoint serves, as its ticket says: rows ``[start, stop)`` of one slice."""

    dataset: str
    slice: str
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start

    @staticmethod
    def of(ticket: fl.Ticket) -> "Part":
        raw = ticket.ticket
        try:
            node = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
            return Part(str(node["dataset"]), str(node["slice"]), int(node["from"]), int(node["to"]))
        except (ValueError, KeyError, TypeError) as e:
            raise FloeError(f"Unreadable Floe ticket {raw!r}: {e}", code="INTERNAL") from e


def _bearer(token: str) -> List[Tuple[bytes, bytes]]:
    if not token.strip() or any(c.isspace() for c in token):
        raise ValueError("Invalid token: empty or with whitespace")
    return [(b"authorization", b"Bearer " + token.encode("ascii"))]


class _TokenFile:
    """A bearer token kept in a file that is renewed in place (a projected ServiceAccount token):
    read again when its modification time or size changes, looked at on every call (a stat)."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._seen: Optional[Tuple[int, int]] = None
        self._headers: List[Tuple[bytes, bytes]] = []
        self.headers()  # a missing or empty file fails here, not on the first call

    def headers(self) -> List[Tuple[bytes, bytes]]:
        stat = os.stat(self.path)
        seen = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if seen != self._seen:
                with open(self.path, encoding="ascii") as f:
                    self._headers = _bearer(f.read().strip())
                self._seen = seen
            return self._headers


class FloeClient:
    """A handle on a Floe cluster through one of its nodes.

    :param address: a node's Flight address: ``"grpc+tcp://127.0.0.1:47470"``, ``"host:port"`` or
        ``"host"`` (port 47470).
    :param patience: seconds :meth:`read_shard` keeps retrying one endpoint (or planning) without
        progress before it gives up and raises the last error.
    :param prefetch: endpoints :meth:`read_shard` fetches at once (the one being consumed and the
        next ones), each on its own thread.
    :param queue_batches: record batches held per endpoint being fetched; with ``prefetch`` this
        bounds the memory a read holds ahead of its consumer.
    :param timeout: seconds for actions and planning calls (``None``: no limit). ``load`` with
        ``wait=True`` waits as long as the load takes unless this is set.
    :param tls_root_certs: for ``grpc+tls://`` nodes, the CA bundle that signs their
        certificates: a PEM file's path or its bytes; defaults to the file named by the
        ``FLOE_TLS_CA_FILE`` environment variable, else the system's CAs.
    :param cert_chain: for nodes that ask for client certificates (mutual TLS), this client's
        certificate chain (PEM path or bytes); ``private_key`` is its key.
    :param token: the bearer token sent with every call (``Authorization: Bearer <token>``);
        defaults to the ``FLOE_TOKEN`` environment variable. Nodes without anonymous callers
        refuse calls without a known token (:class:`~floe_client.errors.Unauthenticated`), and a reader's
        token cannot load or drop (:class:`~floe_client.errors.Unauthorized`).
    :param token_file: instead of ``token``, a file holding it, read again whenever it changes:
        a Kubernetes pod's projected ServiceAccount token, which the kubelet renews before it
        expires (docs/security.md, "Kubernetes callers"); defaults to the ``FLOE_TOKEN_FILE``
        environment variable when no token is given.
    """

    def __init__(
        self,
        address: Union[str, fl.Location],
        *,
        patience: float = 120.0,
        prefetch: int = 2,
        queue_batches: int = 4,
        timeout: Optional[float] = None,
        token: Optional[str] = None,
        token_file: Union[str, os.PathLike, None] = None,
        tls_root_certs: Union[str, bytes, os.PathLike, None] = None,
        cert_chain: Union[str, bytes, os.PathLike, None] = None,
        private_key: Union[str, bytes, os.PathLike, None] = None,
    ):
        if prefetch < 1:
            raise ValueError("prefetch must be at least 1")
        if queue_batches < 1:
            raise ValueError("queue_batches must be at least 1")
        self.address = _normalize(address)
        self.patience = patience
        self.prefetch = prefetch
        self.queue_batches = queue_batches
        self.timeout = timeout
        if token is not None and token_file is not None:
            raise ValueError("token and token_file exclude each other")
        token = token if token is not None or token_file is not None else os.environ.get("FLOE_TOKEN") or None
        if token is None and token_file is None and os.environ.get("FLOE_TOKEN_FILE"):
            token_file = os.environ["FLOE_TOKEN_FILE"]
        self._token_file = _TokenFile(token_file) if token_file is not None else None
        self._headers = _bearer(token) if token else None
        if (cert_chain is None) != (private_key is None):
            raise ValueError("cert_chain and private_key go together (mutual TLS)")
        if tls_root_certs is None and os.environ.get("FLOE_TLS_CA_FILE"):
            tls_root_certs = os.environ["FLOE_TLS_CA_FILE"]
        self._tls = {
            name: _pem(name, value)
            for name, value in (
                ("tls_root_certs", tls_root_certs), ("cert_chain", cert_chain), ("private_key", private_key)
            )
            if value is not None
        }
        self._clients: Dict[str, fl.FlightClient] = {}
        self._nodes: Dict[str, None] = {self.address: None}  # every node seen, in order
        self._versions: Dict[str, int] = {}  # the protocol version each node asked speaks
        self._lock = threading.Lock()
        self._closed = False

    # -- connections ---------------------------------------------------------------------------

    def _flight(self, uri: Optional[str] = None) -> fl.FlightClient:
        uri = uri or self.address
        with self._lock:
            if self._closed:
                raise FloeError("The client is closed", code="CANCELLED")
            client = self._clients.get(uri)
            if client is None:
                # Batches can be larger than gRPC's default 4 MiB message limit.
                client = fl.FlightClient(
                    uri,
                    generic_options=[
                        ("grpc.max_receive_message_length", -1),
                        ("grpc.max_send_message_length", -1),
                    ],
                    **(self._tls if uri.startswith("grpc+tls") else {}),
                )
                self._clients[uri] = client
            return client

    def _known(self) -> List[str]:
        """Nodes to plan through: the entry node first, then every node seen in a plan."""
        with self._lock:
            return list(self._nodes)

    def _saw(self, info: fl.FlightInfo) -> None:
        with self._lock:
            for endpoint in info.endpoints:
                for location in endpoint.locations:
                    uri = _normalize(location)
                    if not uri.startswith(_REUSE_CONNECTION):
                        self._nodes.setdefault(uri, None)

    def _location_of(self, endpoint: fl.FlightEndpoint, planned_through: str, index: int = 0) -> str:
        """Where to read ``endpoint``: its ``index``-th location (a slice's holder first, then the
        nodes holding its other copies), or the node that planned it."""
        if not endpoint.locations:
            return planned_through
        uri = _normalize(endpoint.locations[min(index, len(endpoint.locations) - 1)])
        return planned_through if uri.startswith(_REUSE_CONNECTION) else uri

    def _options(self, timeout: bool = True) -> fl.FlightCallOptions:
        """Options for a call: the token's header, and the timeout of actions and plans."""
        headers = self._token_file.headers() if self._token_file is not None else self._headers
        return fl.FlightCallOptions(timeout=self.timeout if timeout and self.timeout else None, headers=headers)

    def close(self) -> None:
        """Closes every connection the client opened."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
            self._closed = True
        for client in clients:
            try:
                client.close()
            except Exception:  # pragma: no cover - closing is best effort
                pass

    def __enter__(self) -> "FloeClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- actions -------------------------------------------------------------------------------

    def _action(self, kind: str, body: Optional[dict] = None) -> Any:
        payload = json.dumps(body).encode("utf-8") if body is not None else b""
        try:
            results = list(self._flight().do_action(fl.Action(kind, payload), options=self._options()))
        except pa.ArrowException as e:
            raise translate(e) from e
        if not results:
            raise FloeError(f"Action '{kind}' answered nothing", code="INTERNAL")
        return json.loads(results[0].body.to_pybytes())

    def load(
        self,
        name: str,
        table: str,
        *,
        catalog: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Any = None,
        snapshot_id: Optional[int] = None,
        as_of: Union[None, int, str, _dt.datetime] = None,
        batch_rows: Optional[int] = None,
        snapshot: Optional[str] = None,
        wait: bool = True,
        replicas: Optional[int] = None,
    ) -> dict:
        """Loads ``table`` as dataset ``name`` and answers its status. With ``wait`` (the default)
        it answers once the dataset is READY; without, once it is planned (LOADING).

        ``table`` is a ``*.metadata.json`` location or a table directory with a version hint
        (``s3://``, ``s3a://``, ``gs://``, ``abfs://``, a path), or a table in a catalog the nodes
        are configured with: ``"lake.db.clicks"``, or ``"db.clicks"`` with ``catalog="lake"``.

        ``filter`` is a string in Floe's filter syntax (PyIceberg's string forms work too), an
        Iceberg expression in its JSON form as a dict, or a PyIceberg ``BooleanExpression``, sent
        unchanged. ``as_of`` is epoch milliseconds, an ISO-8601 instant or an aware ``datetime``.
        Loading a name again with the same spec answers its status; with another spec it raises
        :class:`~floe_client.errors.AlreadyExists`. With ``snapshot="latest"``, a dataset of that name
        loaded the same way is refreshed to the table's newest snapshot (see :meth:`refresh`).

        ``replicas`` (1 to 3, default 1) is how many nodes hold each slice: with 2, readers switch
        to a slice's other node at once when a node dies, at twice the memory.
        """
        spec: Dict[str, Any] = {"name": name, "table": str(table)}
        if catalog is not None:
            spec["catalog"] = str(catalog)
        if columns is not None:
            if isinstance(columns, str):
                raise TypeError("columns must be a sequence of column names, not a string")
            spec["columns"] = list(columns)
        if filter is not None:
            spec["filter"] = _filter_json(filter)
        if snapshot_id is not None:
            spec["snapshot_id"] = int(snapshot_id)
        if as_of is not None:
            if isinstance(as_of, _dt.datetime):
                if as_of.tzinfo is None:
                    raise ValueError("as_of must be timezone-aware")
                as_of = int(as_of.timestamp() * 1000)
            spec["as_of"] = as_of
        if batch_rows is not None:
            spec["batch_rows"] = int(batch_rows)
        if snapshot is not None:
            spec["snapshot"] = str(snapshot)
        if replicas is not None:
            spec["replicas"] = int(replicas)
        spec["wait"] = bool(wait)
        return self._action("load", spec)

    def refresh(self, name: str, wait: bool = True) -> dict:
        """Moves dataset ``name`` to its table's newest snapshot, loading only the slices that
        changed, and answers its status; ``status["refresh"]`` says what was kept, loaded and
        freed. With ``wait`` (the default) it answers once the new layout serves. Readers switch
        at once; a job's epoch in progress ends on the old layout, its next epoch reads the new
        one."""
        return self._action("refresh", {"name": name, "wait": bool(wait)})

    def status(self, name: str) -> dict:
        """The dataset's status; ``state`` is ``ABSENT`` for unknown names."""
        return self._action("status", {"name": name})

    def drop(self, name: str) -> dict:
        """Drops a dataset (its memory is freed); answers the status it had plus ``dropped``."""
        return self._action("drop", {"name": name})

    def list(self) -> List[dict]:
        """The status of every loaded dataset, by name."""
        return self._action("list")

    def cluster(self) -> dict:
        """The cluster's members as the node sees them: ``self``, ``members``, ``unreachable``."""
        return self._action("cluster")

    # -- training jobs -------------------------------------------------------------------------

    def register_job(
        self,
        job: str,
        dataset: str,
        batch_rows: int,
        *,
        seed: int = 0,
        shuffle: bool = True,
        mode: str = "deterministic",
        columns: Optional[Sequence[str]] = None,
        tail: str = "drop",
        block_rows: Optional[int] = None,
        window_blocks: Optional[int] = None,
        run_rows: Optional[int] = None,
        lease_timeout_ms: Optional[int] = None,
    ) -> dict:
        """Registers training job ``job`` over the READY dataset ``dataset`` and answers its status
        (with ``layout`` and ``batches_per_epoch``). ``batch_rows`` is the global batch: all
        ranks' batch ``k`` together (deterministic mode) or one lease (dynamic mode). ``None``
        settings are left to the server's defaults. Registering again with the same settings
        answers the status (every rank may register); with others it raises
        :class:`~floe_client.errors.AlreadyExists`. See :class:`~floe_client.jobs.JobSpec`."""
        return self.register_job_spec(
            JobSpec(
                job,
                dataset,
                batch_rows,
                seed=seed,
                shuffle=shuffle,
                mode=mode,
                columns=columns,
                tail=tail,
                block_rows=block_rows,
                window_blocks=window_blocks,
                run_rows=run_rows,
                lease_timeout_ms=lease_timeout_ms,
            )
        )

    def register_job_spec(self, spec: JobSpec) -> dict:
        """Registers ``spec`` (see :meth:`register_job`) and answers the job's status."""
        return self._action("register_job", spec.to_json())

    def list_jobs(self) -> List[dict]:
        """The status of every registered training job, by id."""
        return self._action("list_jobs")

    def job_status(self, job: str, epoch: Optional[int] = None) -> dict:
        """The job's status with its counters (``rows_leased``, ``rows_acknowledged``,
        ``rows_reissued``, ``leases_active``) and, in dynamic mode, its epochs' progress.

        ``layout``, ``rows`` and ``batches_per_epoch`` are those of ``epoch`` (default: the latest
        epoch begun). An epoch not begun yet begins on the dataset's newest layout, unless the job
        was registered with ``pin_layout``: after a refresh, epochs read the new snapshot from
        the next one begun."""
        body: Dict[str, Any] = {"job": job}
        if epoch is not None:
            body["epoch"] = int(epoch)
        return self._action("job_status", body)

    def drop_job(self, job: str) -> dict:
        """Drops a job; answers the status it had plus ``dropped``."""
        return self._action("drop_job", {"job": job})

    def lease(self, job: str, epoch: int, worker: str) -> dict:
        """Dynamic mode: asks for the next unleased global batch of ``epoch`` for ``worker``.
        Answers ``{"status": "leased", "lease", "epoch", "batch", "rows"}``, ``{"status": "wait",
        "retry_ms"}`` or ``{"status": "done"}``."""
        return self._action("lease", {"job": job, "epoch": int(epoch), "worker": worker})

    def ack(self, job: str, epoch: int, lease: str, worker: str) -> dict:
        """Dynamic mode: acknowledges a lease once the training loop consumed its batch. The
        answer's ``status`` is ``acknowledged``, ``expired`` (the lease timed out; the batch was or
        will be handed to another worker) or ``duplicate`` (already acknowledged)."""
        answer = self._action("ack", {"job": job, "epoch": int(epoch), "lease": lease, "worker": worker})
        return {"status": answer} if isinstance(answer, str) else answer

    def _job_call(self, kind: str, spec: JobSpec, body: dict) -> dict:
        """A job action that survives the job's entity being lost (registers ``spec`` again) and
        failures a retry can cure, for up to ``patience`` seconds."""
        deadline = time.monotonic() + self.patience
        attempt = 0
        registered = 0
        while True:
            try:
                answer = self._action(kind, body)
                return {"status": answer} if isinstance(answer, str) else answer
            except JobNotFound as error:
                registered += 1
                if registered > 5:
                    raise
                LOG.info("Job '%s' is unknown to the cluster (%s); registering it again", spec.job, error)
                self.register_job_spec(spec)
            except FloeError as error:
                delay = _backoff(attempt)
                if not is_retryable(error) or time.monotonic() + delay > deadline:
                    raise
                LOG.info("'%s' for job '%s' failed (%s); trying again", kind, spec.job, error)
                time.sleep(delay)
                attempt += 1

    def read_job(
        self,
        spec: Union[JobSpec, str],
        epoch: int,
        world_size: int = 1,
        rank: int = 0,
        batch_from: int = 0,
        batch_step: int = 1,
        batch_to: Optional[int] = None,
        *,
        chunk_batches: int = CHUNK_BATCHES_DEFAULT,
        streams: int = STREAMS_DEFAULT,
    ) -> Iterator[Tuple[int, pa.RecordBatch]]:
        """Yields ``(k, batch)``: rank ``rank`` of ``world_size``'s share (``batch_rows /
        world_size`` rows) of every global batch ``k`` in ``range(batch_from, batch_to,
        batch_step)`` of the job's epoch ``epoch``, in order, each exactly once, while nodes come
        and go. ``batch_to`` defaults to the job's ``batches_per_epoch``.

        ``spec`` is the job's :class:`~floe_client.jobs.JobSpec` (a job id is looked up with
        :meth:`job_status`); with it the read registers the job again if the cluster lost it.
        Chunks of ``chunk_batches`` indices are planned at a time, their endpoints read
        ``streams`` at a time, the next chunk fetched while this one is consumed; a stream that
        fails (node gone, slice moved, dataset reloading) makes the read plan its chunk again.
        """
        if isinstance(spec, str):
            spec = JobSpec.from_status(self.job_status(spec))
        spec.rows_per_rank(world_size)  # world_size must divide batch_rows
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < world_size:
            raise ValueError(f"Invalid rank {rank!r} for world size {world_size}")
        for name, value, low in (("epoch", epoch, 0), ("batch_from", batch_from, 0), ("batch_step", batch_step, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"Invalid {name}: {value!r} (must be an integer >= {low})")
        if batch_to is None:
            status = self._job_call("job_status", spec, {"job": spec.job, "epoch": epoch})
            batch_to = int(status["batches_per_epoch"])
        return read_epoch(
            self, spec, epoch, world_size, rank, range(batch_from, int(batch_to), batch_step),
            chunk_batches=chunk_batches, streams=streams,
        )

    def read_dynamic(
        self,
        spec: Union[JobSpec, str],
        epoch: int,
        worker: Optional[str] = None,
        *,
        auto_ack: bool = True,
        idle_items: bool = False,
        streams: int = STREAMS_DEFAULT,
    ) -> Iterator[Tuple[Optional[Lease], Optional[pa.RecordBatch]]]:
        """Dynamic mode: yields ``(lease, batch)`` for global batches of ``epoch`` leased by
        ``worker`` (default ``host/pid-N``) until every batch of the epoch is acknowledged (by
        whichever worker). With ``auto_ack`` a batch is acknowledged when the next one is asked
        for (and the last when the iteration ends); a consumer that stops early leaves its last
        batch to be handed out again after the lease timeout. Without it, call :meth:`ack`.
        With ``idle_items`` every "wait" answer also yields ``(None, None)`` (see
        :func:`floe_client.jobs.read_dynamic`)."""
        if isinstance(spec, str):
            spec = JobSpec.from_status(self.job_status(spec))
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"Invalid epoch: {epoch!r} (must be an integer >= 0)")
        return read_dynamic(
            self, spec, epoch, worker or default_worker_name(),
            auto_ack=auto_ack, idle_items=idle_items, streams=streams,
        )

    # -- reading -------------------------------------------------------------------------------

    @staticmethod
    def _descriptor(dataset: str, shard_index: int, shard_count: int) -> fl.FlightDescriptor:
        return fl.FlightDescriptor.for_command(
            json.dumps(
                {"kind": "shard_read", "dataset": dataset, "shard_index": int(shard_index), "shard_count": int(shard_count)}
            )
        )

    def plan(self, dataset: str, shard_index: int = 0, shard_count: int = 1) -> fl.FlightInfo:
        """Plans shard ``shard_index`` of ``shard_count``: the Arrow schema, ``total_records`` and
        the ordered endpoints. Shard ``i`` of ``n`` is the contiguous global row range
        ``[N*i//n, N*(i+1)//n)``."""
        try:
            return self._flight().get_flight_info(
                self._descriptor(dataset, shard_index, shard_count), options=self._options()
            )
        except pa.ArrowException as e:
            raise translate(e) from e

    def _plan_patiently(self, dataset: str, shard_index: int, shard_count: int):
        """Plans a shard through any known node; answers (info, node). See :meth:`_plan_any`."""
        return self._plan_any(self._descriptor(dataset, shard_index, shard_count), dataset)

    def _speaks(self, uri: str, version: int) -> bool:
        """Whether the node at ``uri`` speaks protocol ``version`` or later: asked once (``cluster``)
        and remembered. A node that cannot be reached raises pyarrow's error, as a plan through it
        would; an answer without a version is version 1."""
        with self._lock:
            known = self._versions.get(uri)
        if known is None:
            results = list(self._flight(uri).do_action(fl.Action("cluster", b""), options=self._options()))
            try:
                known = int(json.loads(results[0].body.to_pybytes()).get("protocol_version", 1))
            except (IndexError, ValueError, TypeError, AttributeError):
                known = 1
            with self._lock:
                self._versions[uri] = known
        return known >= version

    def _plan_any(self, descriptor, what: str):
        """Plans ``descriptor`` through any known node, retrying while that can help; answers
        (info, node). ``descriptor`` is a FlightDescriptor, or a function of the node's URI that
        makes one the node can read (fields of a later protocol version only for nodes that speak
        it).

        A request error (bad shard, ...) ends it at once. "No dataset" (or "unknown job") ends it
        only when every node that answered said so: a node that is leaving the cluster may no
        longer know a dataset the others still serve (or are recovering)."""
        deadline = time.monotonic() + self.patience
        attempt = 0
        while True:
            missing: Optional[BaseException] = None
            hopeful: Optional[BaseException] = None  # an answer that says "try again"
            unreachable: Optional[BaseException] = None
            for uri in self._known():
                try:
                    command = descriptor(uri) if callable(descriptor) else descriptor
                    info = self._flight(uri).get_flight_info(command, options=self._options())
                    self._saw(info)
                    return info, uri
                except pa.ArrowException as e:
                    error = translate(e)
                    LOG.debug("Planning %s through %s failed: %s", what, uri, error)
                    if isinstance(error, (DatasetNotFound, JobNotFound)):
                        missing = missing or error
                    elif not is_retryable(error):
                        raise error from e
                    elif isinstance(error, Unavailable):
                        unreachable = unreachable or error
                    else:
                        hopeful = hopeful or error
            if missing is not None and hopeful is None:
                raise missing
            last = hopeful or unreachable
            delay = _backoff(attempt)
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise last
            time.sleep(delay)

    def read_shard(
        self,
        dataset: str,
        shard_index: int = 0,
        shard_count: int = 1,
        *,
        offset: int = 0,
    ) -> Iterator[pa.RecordBatch]:
        """Yields shard ``shard_index`` of ``shard_count`` as record batches, in the dataset's
        global order, every row exactly once, even while nodes come and go.

        ``offset`` skips the shard's first rows (whole endpoints are skipped without reading
        them); it is how a reader resumes a shard it had read part of.

        Endpoints are fetched ``prefetch`` at a time on a small thread pool, each into a queue of
        at most ``queue_batches`` batches, so memory stays bounded however slow the consumer.
        Closing the iterator (or letting it go) cancels the streams still running.
        """
        if offset < 0:
            raise ValueError("offset must be >= 0")
        info, planned_through = self._plan_patiently(dataset, shard_index, shard_count)
        parts = [Part.of(endpoint.ticket) for endpoint in info.endpoints]
        work = []  # (part, endpoint, rows of it already delivered)
        skip = offset
        for part, endpoint in zip(parts, info.endpoints):
            if skip >= part.rows:
                skip -= part.rows
                continue
            work.append((part, endpoint, skip))
            skip = 0
        if skip > 0:
            raise ValueError(f"offset {offset} is past the end of the shard ({info.total_records} rows)")
        return self._read(dataset, shard_index, shard_count, planned_through, work)

    def _read(self, dataset, shard_index, shard_count, planned_through, work) -> Iterator[pa.RecordBatch]:
        if not work:
            return
        cancelled = threading.Event()
        pool = ThreadPoolExecutor(max_workers=self.prefetch, thread_name_prefix=f"floe-{dataset}-{shard_index}")
        fetches: "collections.deque[_Fetch]" = collections.deque()
        todo = collections.deque(work)
        request = (dataset, shard_index, shard_count)

        def submit() -> None:
            part, endpoint, delivered = todo.popleft()
            fetch = _Fetch(self, request, part, endpoint, planned_through, delivered, self.queue_batches, cancelled)
            fetch.future = pool.submit(fetch.run)
            fetches.append(fetch)

        try:
            while todo and len(fetches) < self.prefetch:
                submit()
            while fetches:
                fetch = fetches[0]
                while True:
                    kind, value = fetch.queue.get()
                    if kind == _BATCH:
                        yield value
                    elif kind == _DONE:
                        break
                    else:
                        raise value
                fetches.popleft()
                if todo:
                    submit()
        finally:
            cancelled.set()
            for fetch in fetches:
                fetch.cancel()
            pool.shutdown(wait=False)


_BATCH, _DONE, _ERROR = "batch", "done", "error"


class _Fetch:
    """Streams one endpoint into a bounded queue, planning again and resuming after the rows
    already delivered when the stream fails in a way a new plan can cure."""

    def __init__(self, client, request, part, endpoint, planned_through, delivered, depth, cancelled):
        self.client = client
        self.request = request
        self.part = part
        self.endpoint = endpoint
        self.location = 0  # which of the endpoint's locations the stream reads from
        self.planned_through = planned_through
        self.delivered = delivered  # rows of this endpoint handed to the queue (or skipped)
        self.queue: "queue.Queue" = queue.Queue(maxsize=depth)
        self.cancelled = cancelled
        self.future = None
        self._reader = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            reader = self._reader
        if reader is not None:
            try:
                reader.cancel()
            except Exception:  # pragma: no cover
                pass
        # Unblock a worker waiting on a full queue.
        try:
            while True:
                self.queue.get_nowait()
        except queue.Empty:
            pass

    def _put(self, item) -> bool:
        while not self.cancelled.is_set():
            try:
                self.queue.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def run(self) -> None:
        try:
            self._run()
            self._put((_DONE, None))
        except BaseException as e:  # handed to the consumer, in order
            self._put((_ERROR, e))

    def _run(self) -> None:
        client = self.client
        part = self.part
        deadline = time.monotonic() + client.patience
        attempt = 0
        while self.delivered < part.rows and not self.cancelled.is_set():
            before = self.delivered
            try:
                self._stream()
                if self.cancelled.is_set():
                    return
                if self.delivered < part.rows:
                    raise FloeError(
                        f"The endpoint of slice {part.slice} ended after {self.delivered} of "
                        f"{part.rows} rows",
                        code="INTERNAL",
                    )
            except pa.ArrowException as e:
                if self.cancelled.is_set() or self.delivered >= part.rows:
                    return  # a failure after the last row costs nothing
                error = translate(e)
                if self.delivered > before:  # progress: patience starts again
                    deadline = time.monotonic() + client.patience
                    attempt = 0
                if not is_retryable(error) or time.monotonic() > deadline:
                    raise error from e
                if isinstance(error, Unavailable) and self.location + 1 < len(self.endpoint.locations):
                    # Another node holds a copy of the slice: read the rest from it at once.
                    self.location += 1
                    LOG.info(
                        "Slice %s failed after %d of %d rows (%s); reading it from its next holder",
                        part.slice, self.delivered, part.rows, error,
                    )
                    continue
                LOG.info(
                    "Slice %s failed after %d of %d rows (%s); planning again",
                    part.slice, self.delivered, part.rows, error,
                )
                time.sleep(_backoff(attempt))
                attempt += 1
                info, self.planned_through = client._plan_patiently(*self.request)
                self.endpoint = self._find(info)
                self.location = 0

    def _find(self, info: fl.FlightInfo) -> fl.FlightEndpoint:
        part = self.part
        for endpoint in info.endpoints:
            candidate = Part.of(endpoint.ticket)
            if candidate.slice == part.slice and candidate.start == part.start and candidate.stop == part.stop:
                return endpoint
        raise FloeError(
            f"The new plan of {self.request[0]} shard {self.request[1]}/{self.request[2]} has no "
            f"endpoint for slice {part.slice} rows [{part.start}, {part.stop}); the dataset "
            f"changed under the reader",
            code="INTERNAL",
        )

    def _stream(self) -> None:
        """Streams the endpoint, skipping the rows already delivered and counting up what it
        delivers, so that progress survives a failure mid-stream."""
        uri = self.client._location_of(self.endpoint, self.planned_through, self.location)
        reader = self.client._flight(uri).do_get(self.endpoint.ticket, options=self.client._options(timeout=False))
        with self._lock:
            self._reader = reader
        try:
            skip = self.delivered
            seen = 0
            while not self.cancelled.is_set():
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    return
                batch = chunk.data
                if batch is None:
                    continue
                rows = batch.num_rows
                start = max(0, skip - seen)
                seen += rows
                if start >= rows:
                    continue
                if start > 0:
                    batch = batch.slice(start)
                left = self.part.rows - self.delivered
                if batch.num_rows > left:
                    raise FloeError(
                        f"The endpoint of slice {self.part.slice} sent more than its {self.part.rows} rows",
                        code="INTERNAL",
                    )
                if not self._put((_BATCH, batch)):
                    return
                self.delivered += batch.num_rows
        finally:
            with self._lock:
                self._reader = None
            if self.cancelled.is_set():
                try:
                    reader.cancel()
                except Exception:  # pragma: no cover
                    pass


def _filter_json(expression: Any) -> Union[str, Dict[str, Any]]:
    """A filter as the ``load`` action takes it: text, or an Iceberg expression as JSON. A PyIceberg
    expression (any object with ``model_dump_json``) is sent in the JSON form Iceberg's REST
    protocol defines, which the server parses with Iceberg's own parser."""
    if isinstance(expression, (str, dict)):
        return expression
    dump = getattr(expression, "model_dump_json", None)
    if callable(dump):
        return json.loads(dump())
    raise TypeError(
        f"filter must be a string, an Iceberg JSON expression (dict) or a PyIceberg expression, "
        f"not {type(expression).__name__}"
    )


def read(
    address: Union[str, fl.Location],
    dataset: str,
    shard_index: int = 0,
    shard_count: int = 1,
    **client_options: Any,
) -> Iterator[pa.RecordBatch]:
    """Yields shard ``shard_index`` of ``shard_count`` of a loaded dataset as record batches, for
    readers without torch; the connections close when the iterator ends or is closed.
    ``client_options`` go to :class:`FloeClient` (``patience``, ``prefetch``, ...)."""
    client = FloeClient(address, **client_options)
    try:
        yield from client.read_shard(dataset, shard_index, shard_count)
    finally:
        client.close()
