"""``./floe node`` as operators start it: JAVA_OPTS comes last and wins, a garbage collector chosen
there included (the launcher's G1 gives way instead of the JVM refusing two collectors)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from floe_client import FloeClient, FloeError
from conftest import NODE_START_TIMEOUT, ROOT, _die_with_parent, free_port


def test_a_collector_in_java_opts_replaces_the_launchers(tmp_path):
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_", "JAVA_OPTS"))}
    environment.update(
        JAVA_OPTS="-XX:+UseSerialGC",
        FLOE_CDS="off",  # the class archive has its own test below; one training per suite is enough
        FLOE_MEMORY_LIMIT="1GiB",
        FLOE_FLIGHT_PORT=str(port),
        FLOE_FLIGHT_BIND_HOST="127.0.0.1",
        FLOE_FLIGHT_ADVERTISED_HOST="127.0.0.1",
        FLOE_REMOTE_HOST="127.0.0.1",
        FLOE_REMOTE_BIND_HOST="127.0.0.1",
        FLOE_REMOTE_PORT="0",
        FLOE_MANAGEMENT_ENABLED="false",
        FLOE_AUTH_ANONYMOUS="operator",
        AWS_EC2_METADATA_DISABLED="true",
    )
    log = tmp_path / "node.log"
    with open(log, "wb") as out:
        node = subprocess.Popen([str(ROOT / "floe"), "node"], cwd=ROOT, env=environment, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    try:
        deadline = time.monotonic() + NODE_START_TIMEOUT
        with FloeClient(f"grpc+tcp://127.0.0.1:{port}", timeout=5.0) as client:
            while True:
                if node.poll() is not None:
                    pytest.fail(f"./floe node exited with {node.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
                try:
                    assert client.list() == []
                    break
                except FloeError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        flags = subprocess.run(["jcmd", str(node.pid), "VM.flags"], capture_output=True, text=True).stdout
        assert "-XX:+UseSerialGC" in flags and "-XX:+UseG1GC" not in flags, flags
    finally:
        node.terminate()
        node.wait(timeout=60)


# -- the class-data-sharing archive (bin/floe-cds) ------------------------------------------------
# The launcher's decisions, with a stand-in for java that records its calls and writes an "archive"
# when asked to train one; then one real node that trains its archive, maps it, and still starts
# when the archive's bytes are not an archive its JVM accepts.

FAKE_JAVA = """#!/bin/sh
echo "$*" >> "$FAKE_JAVA_CALLS"
for a in "$@"; do
  case $a in
    -XX:ArchiveClassesAtExit=*) [ "${FAKE_TRAINING_FAILS:-}" = 1 ] && exit 1; printf 'archive' > "${a#*=}" ;;
  esac
done
exit 0
"""


def _fake_java(path):
    path.write_text(FAKE_JAVA)
    path.chmod(0o755)
    return path


class Cds:
    """bin/floe-cds run with a fake java over a classpath of two jars in ``tmp_path``."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.jars = [tmp_path / "lib" / "a.jar", tmp_path / "lib" / "b.jar"]
        self.jars[0].parent.mkdir()
        for jar in self.jars:
            jar.write_bytes(b"jar")
        self.calls = tmp_path / "calls"
        self.calls.touch()
        (tmp_path / "jdk" / "bin").mkdir(parents=True)
        self.java = _fake_java(tmp_path / "jdk" / "bin" / "java")
        self.archive = tmp_path / "lib" / "floe-node.jsa"

    def run(self, *options, **env):
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "JAVA"))}
        environment.update(JAVA=str(self.java), FAKE_JAVA_CALLS=str(self.calls), **env)
        done = subprocess.run([str(ROOT / "bin" / "floe-cds"), ":".join(map(str, self.jars)), "-Xmx512m", *options],
                              env=environment, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def trainings(self):
        return self.calls.read_text().count("--train-class-archive")


def test_the_archive_is_trained_once_and_then_used(tmp_path):
    cds = Cds(tmp_path)
    assert cds.run() == f"-XX:SharedArchiveFile={cds.archive}"
    assert cds.trainings() == 1
    training = next(line for line in cds.calls.read_text().splitlines() if "--train-class-archive" in line)
    assert training.startswith("-Xmx512m -XX:ArchiveClassesAtExit=")  # the node's own JVM options
    assert "-Xshare:on" in cds.calls.read_text()  # the new archive must map before it is kept
    assert cds.run() == f"-XX:SharedArchiveFile={cds.archive}"
    assert cds.trainings() == 1


def test_an_archive_for_other_jars_another_jdk_or_cut_short_is_trained_again(tmp_path):
    cds = Cds(tmp_path)
    cds.run()
    os.utime(cds.jars[1], (1, 1))  # a rebuilt jar
    assert cds.run() == f"-XX:SharedArchiveFile={cds.archive}"
    assert cds.trainings() == 2
    cds.java = _fake_java(tmp_path / "java-other")  # another JDK
    cds.run()
    assert cds.trainings() == 3
    cds.archive.write_bytes(b"arch")  # truncated: a JVM mapping it would crash
    assert cds.run() == f"-XX:SharedArchiveFile={cds.archive}"
    assert cds.trainings() == 4
    assert cds.archive.read_bytes() == b"archive"


def test_a_failed_training_starts_without_an_archive_and_is_not_retried_for_that_build(tmp_path):
    cds = Cds(tmp_path)
    assert cds.run(FAKE_TRAINING_FAILS="1") == ""
    assert cds.run(FAKE_TRAINING_FAILS="1") == ""
    assert cds.trainings() == 1
    assert not cds.archive.exists() and not list(cds.archive.parent.glob("*.tmp"))
    os.utime(cds.jars[0], (1, 1))  # the next build tries again
    assert cds.run() == f"-XX:SharedArchiveFile={cds.archive}"
    assert cds.trainings() == 2


def test_no_archive_when_switched_off_chosen_in_java_opts_or_not_writable(tmp_path):
    cds = Cds(tmp_path)
    assert cds.run(FLOE_CDS="off") == ""
    assert cds.run("-Xshare:off") == ""
    assert cds.run("-XX:SharedArchiveFile=/elsewhere.jsa") == ""
    assert cds.run(FLOE_CDS_ARCHIVE="/proc/floe-no-such-dir/floe-node.jsa") == ""
    assert cds.trainings() == 0


def _start_node(tmp_path, name, **settings):
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_", "JAVA_OPTS"))}
    environment.update(
        FLOE_MEMORY_LIMIT="1GiB", FLOE_FLIGHT_PORT=str(port), FLOE_FLIGHT_BIND_HOST="127.0.0.1",
        FLOE_FLIGHT_ADVERTISED_HOST="127.0.0.1", FLOE_REMOTE_HOST="127.0.0.1", FLOE_REMOTE_BIND_HOST="127.0.0.1",
        FLOE_REMOTE_PORT="0", FLOE_MANAGEMENT_ENABLED="false", FLOE_AUTH_ANONYMOUS="operator",
        AWS_EC2_METADATA_DISABLED="true", **settings,
    )
    log = tmp_path / f"{name}.log"
    with open(log, "wb") as out:
        node = subprocess.Popen([str(ROOT / "floe"), "node"], cwd=ROOT, env=environment, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    deadline = time.monotonic() + NODE_START_TIMEOUT
    try:
        with FloeClient(f"grpc+tcp://127.0.0.1:{port}", timeout=5.0) as client:
            while True:
                if node.poll() is not None:
                    pytest.fail(f"./floe node exited with {node.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
                try:
                    assert client.list() == []
                    break
                except FloeError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        maps = open(f"/proc/{node.pid}/maps").read()
        return log.read_text(errors="replace"), maps
    finally:
        node.terminate()
        node.wait(timeout=60)


def test_a_node_trains_maps_its_archive_and_starts_when_the_jvm_refuses_it(tmp_path):
    archive = tmp_path / "node.jsa"
    log, maps = _start_node(tmp_path, "first", FLOE_CDS_ARCHIVE=str(archive))
    assert "training the node's class-data-sharing archive" in log
    assert str(archive) in maps, "the node did not map its archive"
    assert "serving" in log and "after its process started: " in log  # the start's steps
    # Bytes that are no archive (as one from another JDK, or a corrupted one, would be), with the
    # key still matching: the JVM refuses them and the node starts without.
    size = archive.stat().st_size
    archive.chmod(0o644)
    archive.write_bytes(b"\0" * size)
    log, maps = _start_node(tmp_path, "refused", FLOE_CDS_ARCHIVE=str(archive))
    assert "training" not in log
    assert str(archive) not in maps
