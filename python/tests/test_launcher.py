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
