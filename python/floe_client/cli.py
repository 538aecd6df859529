"""``floe``: an operator's command line for a Floe cluster, installed with the Python package.

Every command talks to one node (``--address`` or ``FLOE_ADDRESS``) with the caller's token
(``--token`` or ``FLOE_TOKEN``) and, for ``grpc+tls`` nodes, a CA bundle (``--ca`` or
``FLOE_TLS_CA_FILE``). ``--json`` prints the server's answer as JSON instead of a table. These
global options go before or after the command (``floe status events --json``), and ``-h`` is
``--help`` everywhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import typer
import typer.core
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from . import FloeClient, FloeError, __version__
from .replies import ClusterView, DatasetStatus, JobStatus

def _options(command: Any) -> List[Any]:
    # By duck type: typer brings click's classes, or (0.29 and later) its own copy of them.
    return [p for p in command.params if getattr(p, "param_type_name", "") == "option"]


def _hoisted(group: Any, ctx: Any, args: List[str]) -> List[str]:
    """``args`` with the group's own options (``--address``, ``--json``, ...) moved before the
    command wherever they stand after it, with their values; a command's option that takes a value
    keeps it even when it looks like a global flag, and nothing after ``--`` moves."""
    takes_value: Dict[str, bool] = {}
    for param in _options(group):
        if param.name != "version":
            for name in param.opts + param.secondary_opts:
                takes_value[name] = not param.is_flag
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        name = args[i].split("=", 1)[0]
        i += 2 if takes_value.get(name) and "=" not in args[i] else 1
    command = group.get_command(ctx, args[i]) if i < len(args) else None
    if command is None:
        return args
    command_values = {name for param in _options(command) if not param.is_flag for name in param.opts + param.secondary_opts}
    front, rest = args[:i], [args[i]]
    j = i + 1
    while j < len(args):
        arg = args[j]
        name = arg.split("=", 1)[0]
        if arg == "--":
            rest.extend(args[j:])
            break
        taken = front if name in takes_value else rest
        taken.append(arg)
        if (takes_value.get(name) or name in command_values) and "=" not in arg and j + 1 < len(args):
            taken.append(args[j + 1])
            j += 1
        j += 1
    return front + rest


class _GlobalOptionsAnywhere(typer.core.TyperGroup):
    """Takes the global options wherever they stand, as kubectl and gh do: ``floe status x
    --json`` is ``floe --json status x``."""

    def parse_args(self, ctx: Any, args: List[str]) -> List[str]:
        return super().parse_args(ctx, _hoisted(self, ctx, list(args)))


app = typer.Typer(
    cls=_GlobalOptionsAnywhere,
    help="Operate a Floe cluster: load, watch, list and drop datasets; see jobs and nodes.",
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
# Off a terminal (a pipe, a log collector) a line stays one line: rich would wrap it at 80 columns.
out = Console(soft_wrap=not sys.stdout.isatty())
err = Console(stderr=True, soft_wrap=not sys.stderr.isatty())


class Context:
    def __init__(self, address: str, token: Optional[str], ca: Optional[str], as_json: bool, timeout: float):
        self.address = address
        self.token = token
        self.ca = ca
        self.as_json = as_json
        self.timeout = timeout

    def client(self) -> FloeClient:
        return FloeClient(self.address, token=self.token, tls_root_certs=self.ca, timeout=self.timeout)

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One FloeClient call on a fresh connection; a refusal ends the command with its reason."""
        try:
            with self.client() as client:
                return getattr(client, method)(*args, **kwargs)
        except FloeError as e:
            _fail(e)


def _version(value: bool) -> None:
    if value:
        out.print(f"floe {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    address: str = typer.Option("127.0.0.1:47470", envvar="FLOE_ADDRESS", help="A node's Flight address."),
    token: Optional[str] = typer.Option(None, envvar="FLOE_TOKEN", help="Bearer token (reader or operator)."),
    ca: Optional[str] = typer.Option(None, envvar="FLOE_TLS_CA_FILE", help="CA bundle for grpc+tls nodes."),
    as_json: bool = typer.Option(False, "--json", help="Print the server's answers as JSON."),
    timeout: float = typer.Option(60.0, help="Seconds each call may take."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    ctx.obj = Context(address, token, ca, as_json, timeout)


def _fail(error: Exception) -> None:
    err.print(f"[red]error:[/red] {error}", highlight=False, markup=True)
    raise typer.Exit(1)


def _print(ctx: Context, answer: Any, render) -> None:
    if ctx.as_json:
        out.print_json(json.dumps(answer))
    else:
        render(answer)


def size(n: int) -> str:
    """A byte count as people read it (binary units, as kubectl and the node's memory settings
    use): ``512 B``, ``1.7 MiB``, ``4.0 GiB``. ``--json`` keeps exact counts."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def _status_table(replies: List[dict]) -> None:
    table = Table("dataset", "state", "slices", "rows", "size", "snapshot", "source", "owner")
    for s in map(DatasetStatus.of, replies):
        table.add_row(
            s.name, s.state, f"{s.slices_loaded}/{s.slices_total}", f"{s.rows:,}", size(s.bytes),
            "" if s.snapshot_id is None else str(s.snapshot_id), str(s.source or ""), str(s.owner or ""),
        )
    out.print(table)


@app.command()
def load(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The dataset's name."),
    table: str = typer.Argument(..., help="A metadata.json location, a table directory, or catalog.db.table."),
    columns: Optional[str] = typer.Option(None, help="Comma-separated columns to load (default: all)."),
    filter: Optional[str] = typer.Option(None, "--filter", help="A row filter (docs/filter-syntax.md)."),
    snapshot_id: Optional[int] = typer.Option(None, help="A snapshot to pin (default: the newest)."),
    batch_rows: Optional[int] = typer.Option(None, help="Rows per record batch served."),
    replicas: Optional[int] = typer.Option(
        None, help="Nodes holding each slice (1-3): readers switch to a copy at once when a node dies."
    ),
    wait: bool = typer.Option(True, help="Wait for READY, with a progress bar of slices and bytes."),
) -> None:
    """Load a table as a dataset; shows slices and bytes loaded, with an ETA, until READY."""
    c: Context = ctx.obj
    try:
        with c.client() as client:
            status = client.load(
                name, table, columns=columns.split(",") if columns else None, filter=filter,
                snapshot_id=snapshot_id, batch_rows=batch_rows, replicas=replicas, wait=False,
            )
            if wait:
                status = _follow(c, client, name, status)
    except FloeError as e:
        _fail(e)
    _print(c, status, lambda s: _status_table([s]))
    if DatasetStatus.of(status).state == "FAILED":
        raise typer.Exit(1)


def _follow(c: Context, client: FloeClient, name: str, status: dict) -> dict:
    """Polls the dataset's status until it is READY or FAILED, showing progress on stderr: a live
    bar on a terminal, a line whenever the numbers move otherwise (a pod's log, a CI job); nothing
    with --json."""
    if c.as_json:  # the answer alone
        show = contextlib.nullcontext(lambda status: None)
    else:
        show = _progress_bar(name) if err.is_terminal else _progress_lines(name)
    with show as update:
        while True:
            current = DatasetStatus.of(status)
            update(current)
            if current.done:
                break
            time.sleep(0.5)
            status = client.status(name)
    error = DatasetStatus.of(status).error
    if error is not None:
        err.print(f"[red]FAILED[/red] ({error.kind}): {error.message}", highlight=False)
    return status


@contextlib.contextmanager
def _progress_bar(name: str):
    columns = (
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} slices"),
        TextColumn("{task.fields[rows]:,} rows, {task.fields[size]}"), TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err) as progress:
        task = progress.add_task(name, total=1, rows=0, size=size(0))
        yield lambda status: progress.update(
            task, total=max(1, status.slices_total), completed=status.slices_loaded, rows=status.rows,
            size=size(status.bytes),
        )


@contextlib.contextmanager
def _progress_lines(name: str):
    started = time.monotonic()
    last = [None]

    def update(status: DatasetStatus) -> None:
        loaded, total = status.slices_loaded, status.slices_total
        line = f"Dataset {name!r} {status.state}: {loaded}/{total} slices, {status.rows:,} rows, {size(status.bytes)}"
        if 0 < loaded < total:
            line += f", about {max(1, int((time.monotonic() - started) * (total - loaded) / loaded))} s left"
        if line != last[0]:
            err.print(line, highlight=False)
            last[0] = line

    yield update


_LOCATION_SCHEMES = ("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "file")
_CACHE = "cache://"
_CACHE_FORM = "cache://<schema>/<table>"
# What Kubeflow's SDK and its cache runtime also set, to size the cache pods Kubeflow's own
# initializer starts; Floe starts none (its nodes are a StatefulSet of their own).
_UNUSED_CACHE_SETTINGS = ("CACHE_IMAGE", "HEAD_CPU", "HEAD_MEM", "WORKER_CPU", "WORKER_MEM")


def _is_location(value: str) -> bool:
    return value.startswith("/") or (":" in value and value.split(":", 1)[0].lower() in _LOCATION_SCHEMES)


def parse_cache_uri(uri: str) -> Tuple[str, str]:
    """``(schema, table)`` of Kubeflow's ``cache://<schema>/<table>``, as its SDK's
    ``DataCacheInitializer`` writes it; a malformed one raises ``ValueError`` naming what is wrong."""
    rest = uri.strip()[len(_CACHE):]

    def invalid(what: str) -> ValueError:
        return ValueError(f"Invalid storage URI {uri!r}: {what}; Kubeflow's cache takes {_CACHE_FORM}")

    if any(c.isspace() or not c.isprintable() for c in rest):
        raise invalid("it holds whitespace")
    query = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    if query >= 0:
        raise invalid(f"{rest[query:]!r} follows the table (no query or fragment)")
    schema, _, table = rest.partition("/")
    if not schema:
        raise invalid("no schema before the table")
    if not table:
        raise invalid(f"no table after schema {schema!r}")
    if "/" in table:
        raise invalid(f"more than one segment after the schema ({table!r})")
    if "" in schema.split("."):
        raise invalid(f"schema {schema!r} has an empty part between dots")
    return schema, table


def source_of_storage_uri(uri: Optional[str], metadata_location: Optional[str] = None,
                          catalog: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """``(table, catalog)`` to load for a Kubeflow TrainJob's ``storageUri``:
    ``floe://<catalog>.<db>.<table>`` a catalog table, a table location (s3://, gs://, abfs://,
    file:, a path) itself, and Kubeflow's ``cache://<schema>/<table>`` the table at
    ``metadata_location`` (``METADATA_LOC``, which the SDK always sets) or, without one,
    ``<schema>.<table>`` in ``catalog`` (``FLOE_CATALOG``). Raises ``ValueError`` naming what is
    wrong and what to set."""
    value = (uri or "").strip()
    metadata = (metadata_location or "").strip() or None
    if not value:
        raise ValueError("No storage URI: set STORAGE_URI (the TrainJob's spec.initializer.dataset.storageUri)")
    if value[:len(_CACHE)].lower() == _CACHE:
        schema, table = parse_cache_uri(value)
        cache = f"{_CACHE}{schema}/{table}"
        if metadata is not None:
            if not _is_location(metadata):
                raise ValueError(f"Invalid METADATA_LOC {metadata_location!r} for {cache}: it must be the table's "
                                 "metadata.json location (s3://, s3a://, gs://, abfs://, file: or a path)")
            return metadata, None
        catalog = (catalog or "").strip() or None
        if catalog is None:
            raise ValueError(f"{cache} names no table Floe can open: set METADATA_LOC (the table's metadata.json, "
                             "as Kubeflow's SDK does) or FLOE_CATALOG (a catalog the Floe nodes are configured "
                             f"with, holding {schema}.{table})")
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", catalog):
            raise ValueError(f"Invalid FLOE_CATALOG {catalog!r}: the name of a catalog the Floe nodes are configured "
                             "with (1-64 letters, digits, '_', '-')")
        if "." in table:
            raise ValueError(f"Table {table!r} of {cache} holds a dot, which catalog {catalog!r} would read as a "
                             "namespace: set METADATA_LOC instead")
        return f"{schema}.{table}", catalog
    if metadata is not None:
        raise ValueError(f"METADATA_LOC is read with a {_CACHE_FORM} storage URI only, not with {uri!r}: put the "
                         "table's location in STORAGE_URI, or use cache://")
    if value.startswith("floe://"):
        identifier = value[len("floe://"):]
        parts = identifier.split(".")
        if len(parts) < 2 or not all(parts) or any(c in identifier for c in "/ "):
            raise ValueError(f"Invalid storage URI {uri!r}: floe:// takes <catalog>.<db>.<table>")
        return identifier, None
    if _is_location(value):
        return value, None
    raise ValueError(f"Floe loads Iceberg tables: the storage URI {uri!r} must be floe://<catalog>.<db>.<table>, "
                     f"{_CACHE_FORM} (with METADATA_LOC or FLOE_CATALOG) or a table location "
                     "(s3://, gs://, abfs://, file:)")


def table_of_storage_uri(uri: str) -> str:
    """What a Kubeflow TrainJob's ``storageUri`` names with nothing set beside it:
    ``floe://<catalog>.<db>.<table>`` a catalog table, a table location itself."""
    return source_of_storage_uri(uri)[0]


def requested_data_nodes(cluster_size: Optional[str]) -> Optional[int]:
    """``CLUSTER_SIZE`` as data nodes: Kubeflow's SDK sets ``num_data_nodes + 1`` (its head)."""
    if cluster_size is None or not cluster_size.strip():
        return None
    value = cluster_size.strip()
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"Invalid CLUSTER_SIZE {cluster_size!r}: a whole number of cache pods, at least 1 "
                         "(Kubeflow's SDK sets num_data_nodes + 1)")
    return max(1, int(value) - 1)


def _compare_cluster_size(client: FloeClient, requested: int, cluster_size: str) -> None:
    """CLUSTER_SIZE against the data nodes Up: logged only, as Floe's cluster is shared."""
    try:
        up = ClusterView.of(client.cluster()).data_nodes_up
    except FloeError as e:
        err.print(f"Could not ask the Floe cluster how many data nodes are Up: {e}", highlight=False)
        return
    err.print(f"{'[yellow]warning:[/yellow] ' if up < requested else ''}The TrainJob asked for {requested} data "
              f"nodes (CLUSTER_SIZE {cluster_size.strip()}); Floe's shared cluster serves the dataset from the {up} data "
              "nodes Up, and this step does not resize it", highlight=False)


@app.command(name="initialize-dataset")
def initialize_dataset(
    ctx: typer.Context,
    storage_uri: Optional[str] = typer.Option(
        None, envvar="STORAGE_URI",
        help="floe://<catalog>.<db>.<table>, cache://<schema>/<table> or a table location."),
    metadata_location: Optional[str] = typer.Option(
        None, envvar="METADATA_LOC", help="The table's metadata.json, for a cache:// storage URI."),
    catalog: Optional[str] = typer.Option(
        None, envvar="FLOE_CATALOG",
        help="The Floe catalog holding <schema>.<table> of a cache:// URI when there is no METADATA_LOC."),
    dataset: Optional[str] = typer.Option(
        None, envvar="FLOE_DATASET", help="The dataset's name on the cluster (default: the TrainJob's name)."),
    train_job_name: Optional[str] = typer.Option(
        None, envvar="TRAIN_JOB_NAME", help="The TrainJob's name: the dataset's name unless FLOE_DATASET is set."),
    cluster_size: Optional[str] = typer.Option(
        None, envvar="CLUSTER_SIZE",
        help="Cache pods the TrainJob asked for: compared with the data nodes Up and logged, not acted on."),
    iam_role: Optional[str] = typer.Option(
        None, envvar="IAM_ROLE", help="Logged, not assumed: Floe's nodes read tables with their own credentials."),
    columns: Optional[str] = typer.Option(None, envvar="FLOE_COLUMNS", help="Comma-separated columns (default: all)."),
    filter: Optional[str] = typer.Option(None, "--filter", envvar="FLOE_FILTER", help="A row filter."),
) -> None:
    """Kubeflow's dataset-initializer step: load the TrainJob's dataset (STORAGE_URI, and what
    Kubeflow's SDK sets beside a cache:// URI) and wait until it is READY, with progress in the
    log; exits 1 with the reason if it fails, 2 if a setting is missing or wrong."""
    try:
        table, table_catalog = source_of_storage_uri(storage_uri, metadata_location, catalog)
        name = (dataset or "").strip() or (train_job_name or "").strip()
        if not name:
            raise ValueError("No dataset name: set FLOE_DATASET, or TRAIN_JOB_NAME (the runtime sets it to the "
                             "TrainJob's name)")
        requested = requested_data_nodes(cluster_size)
    except ValueError as e:
        err.print(f"[red]{e}[/red]", highlight=False)
        raise typer.Exit(2)
    where = table if table_catalog is None else f"{table} in catalog {table_catalog}"
    if iam_role and iam_role.strip():
        err.print(f"[yellow]warning:[/yellow] IAM_ROLE {iam_role.strip()} is not assumed: Floe's nodes read table "
                  f"{where} with their own credentials (the role of their ServiceAccount, or FLOE_S3_* keys); that "
                  "role needs read access to it", highlight=False)
    unused = [f"{k}={os.environ[k]}" for k in _UNUSED_CACHE_SETTINGS if os.environ.get(k, "").strip()]
    if unused:
        err.print(f"Not used by Floe, whose nodes are a StatefulSet of their own: {', '.join(unused)} (they size "
                  "the cache pods Kubeflow's own initializer would start)", highlight=False)
    c: Context = ctx.obj
    err.print(f"Loading dataset {name!r} ({storage_uri.strip()}) from {where} through {c.address}", highlight=False)
    try:
        with c.client() as client:
            status = client.load(name, table, catalog=table_catalog, columns=columns.split(",") if columns else None,
                                 filter=filter, wait=False)
            if requested is not None:
                _compare_cluster_size(client, requested, cluster_size)
            status = _follow(c, client, name, status)
    except FloeError as e:
        _fail(e)
    _print(c, status, lambda s: _status_table([s]))
    if DatasetStatus.of(status).state == "FAILED":
        raise typer.Exit(1)


@app.command()
def status(ctx: typer.Context, name: str = typer.Argument(..., help="The dataset's name.")) -> None:
    """A dataset's state, slices, rows, bytes and snapshot."""
    c: Context = ctx.obj
    answer = c.call("status", name)
    _print(c, answer, lambda s: _status_table([s]))
    if DatasetStatus.of(answer).state == "ABSENT":
        err.print(f"No dataset '{name}' is loaded", highlight=False)
        raise typer.Exit(1)


@app.command(name="list")
def list_datasets(ctx: typer.Context) -> None:
    """Every loaded dataset."""
    c: Context = ctx.obj
    answer = c.call("list")
    _print(c, answer, _status_table)


@app.command()
def drop(ctx: typer.Context, name: str = typer.Argument(..., help="The dataset's name.")) -> None:
    """Drop a dataset and free its memory (an operator's token)."""
    c: Context = ctx.obj
    answer = c.call("drop", name)
    _print(c, answer, lambda s: _status_table([s]))


@app.command()
def refresh(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The dataset's name."),
    wait: bool = typer.Option(True, help="Wait until the refresh is done."),
) -> None:
    """Move a dataset to its table's newest snapshot, reloading only what changed."""
    c: Context = ctx.obj
    answer = c.call("refresh", name, wait=wait)
    _print(c, answer, lambda s: _status_table([s]))


@app.command()
def jobs(ctx: typer.Context) -> None:
    """Every registered training job: dataset, mode, batches an epoch and rows leased,
    acknowledged and re-issued."""
    c: Context = ctx.obj
    answer = c.call("list_jobs")

    def render(all_jobs: List[dict]) -> None:
        table = Table("job", "dataset", "mode", "batch rows", "batches/epoch", "leased", "acknowledged", "re-issued")
        for j in map(JobStatus.of, all_jobs):
            table.add_row(j.job, j.dataset, j.mode, f"{j.batch_rows:,}", f"{j.batches_per_epoch:,}",
                          f"{j.counters.rows_leased:,}", f"{j.counters.rows_acknowledged:,}",
                          f"{j.counters.rows_reissued:,}")
        out.print(table)

    _print(c, answer, render)


@app.command()
def job(
    ctx: typer.Context,
    job_id: str = typer.Argument(..., help="The job's id."),
    epoch: Optional[int] = typer.Option(None, help="An epoch to show (its layout and progress)."),
) -> None:
    """A training job: its settings, counters and per-epoch progress (leased, acknowledged)."""
    c: Context = ctx.obj
    answer = c.call("job_status", job_id, epoch)

    def render(reply: dict) -> None:
        j = JobStatus.of(reply)
        out.print(f"[bold]{j.job}[/bold] on {j.dataset}: mode {j.mode}, "
                  f"{j.batch_rows} rows a batch, {j.batches_per_epoch} batches an epoch")
        if j.owner is not None:
            out.print(f"registered by {j.owner}")
        c = j.counters
        out.print(f"rows leased {c.rows_leased:,}, rows acknowledged {c.rows_acknowledged:,}, "
                  f"rows reissued {c.rows_reissued:,}, leases active {c.leases_active:,}")
        table = Table("epoch", "batches", "pending", "leased", "acknowledged")
        for e in j.epochs:
            table.add_row(*(str(v) for v in (e.epoch, e.batches, e.pending, e.leased, e.acknowledged)))
        if table.row_count:
            out.print(table)

    _print(c, answer, render)


@app.command()
def cluster(ctx: typer.Context) -> None:
    """The cluster's members as the node sees them, and the node's memory."""
    c: Context = ctx.obj
    answer = c.call("cluster")

    def render(reply: dict) -> None:
        view = ClusterView.of(reply)
        table = Table("member", "status", "roles")
        for m in view.members:
            table.add_row(m.address, m.status, ",".join(m.roles))
        out.print(table)
        memory = view.memory
        out.print(f"this node ({view.self}): {size(memory.arrow_allocated_bytes)} of "
                  f"{size(memory.arrow_limit_bytes)} of Arrow memory held, {memory.slices_held} slices")
        for address in view.unreachable:
            out.print(f"[red]unreachable:[/red] {address}")
        if view.warning:
            out.print(f"[yellow]warning:[/yellow] {view.warning}")

    _print(c, answer, render)


def run() -> None:  # the console script
    app()


if __name__ == "__main__":
    sys.exit(run())
