"""Fixtures: a real Floe data node (a JVM on 127.0.0.1) and a real Iceberg table.

Nothing is built here: the Java build must have run at the repository root first
(``mvn -B -q -DskipTests package``, or ``mvn -B verify``), leaving
``cluster/target/runtime-classpath.txt`` and each module's ``target/classes``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from floe_client import FloeClient, FloeError
from floe_client.errors import Unauthenticated

ROOT = Path(__file__).resolve().parents[2]
ROWS = 200_000
# Rows of the ``job_data`` dataset: divisible by 2, 3, 4, 6, ... so that batch sizes divide it.
JOB_ROWS = 48_000
FILES = 5
SEED = 7
NODE_START_TIMEOUT = 180.0
# FloeNode's last start line names the Flight URI it serves at.
_SERVING = re.compile(r"Floe node up: Flight at (\S+),")
JAVA_FLAGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        pytest.fail("No java on PATH (Floe's nodes are JVMs; Java 17+ is needed)")
    return java


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def classpath() -> str:
    runtime = ROOT / "tools" / "target" / "runtime-classpath.txt"
    modules = [ROOT / m / "target" / "classes" for m in ("tools", "cluster", "flight-gateway", "actors", "loader", "initializer", "client", "protocol", "core")]
    missing = [str(p) for p in [runtime, *modules] if not p.exists()]
    if missing:
        pytest.fail(
            "The Java build is missing "
            + ", ".join(missing)
            + ": run `mvn -B -q -DskipTests package` at the repository root first"
        )
    tools = [str(modules[0]), runtime.read_text().strip()]
    jars = _node_jars()
    if jars is not None:
        # The node's classes from the jars `mvn package` wrote, so that nodes can map a class
        # archive (_class_archive); the tools (SampleTable) after them.
        return ":".join([jars, *tools])
    # Floe's own classes come from target/classes; the runtime classpath holds the rest
    # (tools/pom.xml leaves Floe's jars out of it).
    return ":".join([*(str(m) for m in modules), *tools[1:]])


@functools.lru_cache(maxsize=None)
def _node_jars():
    """The node's classpath as `./floe node` has it (the cluster module's jar and its runtime
    classpath: jars only), or None when a module's jar is missing or older than its
    target/classes (compiled since the last package): then nodes run from target/classes."""
    runtime = ROOT / "cluster" / "target" / "runtime-classpath.txt"
    if not runtime.exists():
        return None
    cluster = [j for j in (ROOT / "cluster" / "target").glob("floe-cluster-*.jar")
               if not j.name.endswith(("-tests.jar", "-sources.jar", "-javadoc.jar"))]
    if len(cluster) != 1:
        return None
    entries = [str(cluster[0]), *runtime.read_text().strip().split(":")]
    for entry in entries:
        jar = Path(entry)
        if not jar.is_file():
            return None
        classes = jar.parent / "classes"
        if jar.parent.parent.parent == ROOT and classes.is_dir():  # one of Floe's modules
            built = jar.stat().st_mtime
            if any(f.stat().st_mtime > built for f in classes.rglob("*") if f.is_file()):
                return None
    return ":".join(entries)


# Classpath -> the JVM option that maps its node class archive ("" for none), made once a run.
_ARCHIVES = {}


def _class_archive(classpath: str) -> list:
    """A class-data-sharing archive of what a test node loads (bin/floe-cds, as `./floe node`
    uses one, trained with the test nodes' own JVM flags into cluster/target once per build):
    a node then starts on about half the CPU. Only for a classpath of jars up front (the
    archive's); entries after them (the tools' classes) may follow, as the JVM allows."""
    jars = _node_jars()
    if jars is None or not (classpath == jars or classpath.startswith(jars + ":")):
        return []
    if jars not in _ARCHIVES:
        environment = dict(os.environ, JAVA=_java(), FLOE_CDS_ARCHIVE=str(ROOT / "cluster" / "target" / "floe-node-tests.jsa"))
        result = subprocess.run([str(ROOT / "bin" / "floe-cds"), jars, *JAVA_FLAGS, "-Xmx512m"], cwd=ROOT,
                                env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        _ARCHIVES[jars] = result.stdout.strip() if result.returncode == 0 else ""
    return [_ARCHIVES[jars]] if _ARCHIVES[jars] else []


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the test process dies, also when it dies without
    running its teardown (a crash in a native library), so no node outlives its test run."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: teardown alone stops the node


def end_process(process: subprocess.Popen, graceful: bool = True) -> None:
    """Ends a node's process: SIGTERM and up to 30 s for its coordinated shutdown, then SIGKILL;
    or SIGKILL at once when not ``graceful`` (nothing to hand off, nothing to wait for)."""
    if process.poll() is not None:
        return
    if graceful:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait(timeout=30)


class Node:
    """A Floe data node process on 127.0.0.1; ``address`` is its Flight URI."""

    def __init__(
        self, classpath: str, log: Path, settings: dict = None, env: dict = None, client_options: dict = None
    ):
        # The node binds a port the kernel picks and logs it: a port chosen here and passed in
        # could be taken by any process's outgoing connection before the JVM binds it.
        self._address = None
        self.client_options = client_options or {}
        self.log = log
        command = [
            _java(),
            *JAVA_FLAGS,
            *_class_archive(classpath),
            "-Xmx512m",
            "-Dfloe.flight.port=0",
            "-Dfloe.flight.bind-host=127.0.0.1",
            "-Dfloe.management.enabled=false",
            "-Dpekko.remote.artery.canonical.port=0",
            "-Dpekko.remote.artery.canonical.hostname=127.0.0.1",
            "-Dfloe.load.slice-target-size=1MiB",
            # The suite starts many nodes; the warm-up has its own test (ServingWarmupTest).
            *(() if "floe.gateway.warm-up" in (settings or {}) else ("-Dfloe.gateway.warm-up=0s",)),
            # Nodes of one test cluster share the secret that signs tickets.
            "-Dfloe.security.ticket-secret=python-tests-ticket-secret-0123456789",
            *(() if "floe.security.auth.tokens-file" in (settings or {}) else ("-Dfloe.security.auth.anonymous=operator",)),
            *(() if "floe.security.allowed-locations" in (settings or {}) else ("-Dfloe.security.allowed-locations=*",)),
            *(f"-D{k}={v}" for k, v in (settings or {}).items()),
            "-cp",
            classpath,
            "io.floe.node.Main",
        ]
        self._log_file = open(log, "wb")
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_"))}
        # Never ask the EC2 instance metadata address for credentials: tests stay on 127.0.0.1.
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment.update(env or {})
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=self._log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=environment, preexec_fn=_die_with_parent,
        )

    @property
    def address(self) -> str:
        """The Flight URI the node logs once it serves; waits for that line."""
        if self._address is None:
            deadline = time.monotonic() + NODE_START_TIMEOUT
            while self._address is None:
                found = _SERVING.search(self.log.read_text(errors="replace")) if self.log.exists() else None
                if found:
                    self._address = found.group(1)
                elif self.process.poll() is not None:
                    pytest.fail(f"The Floe node exited with {self.process.returncode}:\n{self.tail()}")
                elif time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"The Floe node did not serve within {NODE_START_TIMEOUT:.0f} s:\n{self.tail()}")
                else:
                    time.sleep(0.1)
        return self._address

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_ready(self, timeout: float = NODE_START_TIMEOUT) -> None:
        """Waits until the node answers the ``list`` action."""
        deadline = time.monotonic() + timeout
        last = None
        with FloeClient(self.address, timeout=5.0, **self.client_options) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    pytest.fail(f"The Floe node exited with {self.process.returncode}:\n{self.tail()}")
                try:
                    client.list()
                    return
                except Unauthenticated:
                    return  # it answers, and wants a token: serving
                except FloeError as e:
                    last = e
                    time.sleep(0.5)
        self.stop()
        pytest.fail(f"The Floe node did not answer `list` within {timeout:.0f} s ({last}):\n{self.tail()}")

    def stop(self) -> None:
        end_process(self.process)
        self._log_file.close()

    def kill(self) -> None:
        """SIGKILL: how a test's multi-node cluster is torn down once its assertions ran. A graceful
        stop of each member in turn waits out Pekko's leaving (sharding hand-off, a leader that is
        itself leaving): 10-20 s per cluster, and it proves nothing there, since ``stop`` kills
        after 30 s anyway. Tests of a node leaving in order SIGTERM it themselves."""
        end_process(self.process, graceful=False)
        self._log_file.close()


@pytest.fixture(scope="session")
def node_process(classpath, tmp_path_factory):
    """Starts the node (it boots while the table is written); stops it at the end, always."""
    node = Node(classpath, tmp_path_factory.mktemp("node") / "node.log")
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def sample_table(classpath, tmp_path_factory) -> Path:
    """A real Iceberg table written by the Java sample-table writer: ``ROWS`` rows in ``FILES``
    files; ``id`` runs over 0..ROWS-1."""
    table = tmp_path_factory.mktemp("iceberg") / "sample"
    result = subprocess.run(
        [_java(), *JAVA_FLAGS, "-Xmx512m", "-cp", classpath, "io.floe.demo.SampleTable",
         str(table), str(ROWS), str(FILES), str(SEED)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0 or not (table / "metadata" / "version-hint.text").exists():
        pytest.fail(f"SampleTable failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return table


@pytest.fixture(scope="session")
def node(node_process, sample_table) -> Node:
    node_process.wait_ready()
    return node_process


@pytest.fixture(scope="session")
def small_node(classpath, sample_table, tmp_path_factory):
    """A node whose memory limit cannot hold the sample table: its loads of it FAIL."""
    node = Node(classpath, tmp_path_factory.mktemp("small-node") / "node.log", {"floe.memory.limit": "1MiB"})
    try:
        node.wait_ready()
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def address(node) -> str:
    return node.address


@pytest.fixture()
def client(address):
    with FloeClient(address, timeout=120.0, patience=60.0) as c:
        yield c


@pytest.fixture(scope="session")
def sample(address, sample_table) -> str:
    """The whole sample table loaded as dataset ``sample`` (READY)."""
    with FloeClient(address) as c:
        status = c.load("sample", str(sample_table), batch_rows=8192)
    assert status["state"] == "READY", status
    assert status["rows"] == ROWS, status
    return "sample"


@pytest.fixture(scope="session")
def job_data(address, sample_table) -> str:
    """The sample table's rows with ``id < JOB_ROWS`` as dataset ``jobdata`` (READY), over a few
    slices, for training jobs: ``id`` runs over 0..JOB_ROWS-1."""
    with FloeClient(address) as c:
        status = c.load("jobdata", str(sample_table), filter=f"id < {JOB_ROWS}", batch_rows=4096)
    assert status["state"] == "READY", status
    assert status["rows"] == JOB_ROWS, status
    return "jobdata"
