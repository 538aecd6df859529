"""The node image as Jib builds it in the Maven build (an OCI tarball, no Docker daemon): its
entrypoint, user, ports and layers, then a node started from the image's own application layers
and entrypoint command (with this machine's JRE: the base image here is one this test assembles,
since no registry is reachable), which loads and serves a dataset, and the dataset-initializer
entry point run from the same layers."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from floe_client import FloeClient, FloeError
from conftest import JAVA_FLAGS, ROOT, ROWS, _java, free_port

APP = "/opt/floe"
PASSWD = b"root:x:0:0:root:/root:/bin/sh\nfloe:x:10001:10001:floe:/nonexistent:/usr/sbin/nologin\n"


def base_image(path: Path) -> Path:
    """A docker-format image tarball with one layer (/etc/passwd naming user 10001)."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        folder = tarfile.TarInfo("etc")
        folder.type, folder.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(folder)
        passwd = tarfile.TarInfo("etc/passwd")
        passwd.size, passwd.mode = len(PASSWD), 0o644
        tar.addfile(passwd, io.BytesIO(PASSWD))
    blob = layer.getvalue()
    config = {"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/usr/bin:/bin"]},
              "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(blob).hexdigest()]}}
    manifest = [{"Config": "config.json", "RepoTags": ["floe-test-base:1"], "Layers": ["layer.tar"]}]
    with tarfile.open(path, "w") as tar:
        for name, data in (("layer.tar", blob), ("config.json", json.dumps(config).encode()),
                           ("manifest.json", json.dumps(manifest).encode())):
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    return path


class Image:
    """An OCI image tarball, opened: its config and its layers in order."""

    def __init__(self, path: Path, out: Path):
        with tarfile.open(path) as tar:
            tar.extractall(out)
        self.blobs = out / "blobs" / "sha256"
        index = json.loads((out / "index.json").read_text())
        (entry,) = index["manifests"]
        self.name = entry["annotations"]["org.opencontainers.image.ref.name"]
        self.manifest = self.blob(entry["digest"])
        self.config = self.blob(self.manifest["config"]["digest"])["config"]
        self.layers = [self.blobs / layer["digest"].split(":")[1] for layer in self.manifest["layers"]]

    def blob(self, digest: str) -> dict:
        return json.loads((self.blobs / digest.split(":")[1]).read_text())

    def names(self, layer: Path) -> list:
        with tarfile.open(layer) as tar:
            return tar.getnames()

    def unpack(self, layers: list, root: Path) -> Path:
        for layer in layers:
            with tarfile.open(layer) as tar:
                tar.extractall(root)
        return root


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> Image:
    work = tmp_path_factory.mktemp("image")
    base = base_image(work / "base.tar")
    result = subprocess.run(
        ["mvn", "-B", "-q", "-pl", "cluster", "-am", "package", "-DskipTests", "-Denforcer.skip=true",
         "-Pimage", f"-Dfloe.image.base=tar://{base}"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return Image(ROOT / "cluster" / "target" / "floe-image.tar", work / "oci")


def test_entrypoint_user_ports_and_layers(image):
    assert image.name.startswith("floe:")
    config = image.config
    assert config["Entrypoint"] == [
        "java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "-XX:+ExitOnOutOfMemoryError", "-cp", f"@{APP}/jib-classpath-file", "io.floe.node.Main",
    ]
    assert config["User"] == "10001:10001"  # the base's /etc/passwd names it; never root
    assert set(config["ExposedPorts"]) == {"47470/tcp", "25520/tcp", "8558/tcp"}
    assert config["Labels"]["org.opencontainers.image.licenses"] == "Apache-2.0"
    # The base's one layer, then Jib's: third-party jars, Floe's own jars, resources, classes and
    # the classpath files, each its own layer so that a code change ships a small one.
    base, *app = image.layers
    assert image.names(base) == ["etc", "etc/passwd"]
    contents = [set(image.names(layer)) for layer in app]
    jars = [n for layer in contents for n in layer if n.startswith("opt/floe/libs/") and n.endswith(".jar")]
    assert len(jars) > 100
    floe_jars = {Path(n).name.split("-0.")[0] for n in jars if Path(n).name.startswith("floe-")}
    assert floe_jars == {"floe-core", "floe-protocol", "floe-client", "floe-initializer", "floe-loader",
                         "floe-actors", "floe-flight-gateway"}
    # cluster's own classes and resources as its jar (containerizingMode packaged): a class-data-
    # sharing archive holds classes from jars only.
    assert any(n.startswith("opt/floe/classpath/floe-cluster-") and n.endswith(".jar")
               for layer in contents for n in layer)
    assert not any(n.startswith(("opt/floe/classes/", "opt/floe/resources/")) for layer in contents for n in layer)
    assert any("opt/floe/jib-classpath-file" in layer for layer in contents)
    # Floe's own jars sit in a layer apart from the third-party ones.
    third_party = [layer for layer in contents if any(n.endswith(".jar") and "floe-" not in n for n in layer)]
    assert third_party and not any(n for layer in third_party for n in layer if Path(n).name.startswith("floe-"))


def _classpath_under(root: Path) -> None:
    classpath = root / APP.lstrip("/") / "jib-classpath-file"
    entries = classpath.read_text()
    if entries.startswith(APP):  # once: the file names the image's paths
        classpath.write_text(entries.replace(APP, str(root / APP.lstrip("/"))))


DOCKERFILE = ROOT / "cluster" / "src" / "main" / "docker" / "Dockerfile"


def train_class_archive(root: Path) -> str:
    """Runs the Dockerfile's RUN (training the class-data-sharing archive) against the image's
    files under ``root``, with this machine's java; answers its JDK_JAVA_OPTIONS, paths moved
    under ``root`` the same way."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    (run,) = [line[len("RUN "):] for line in text.splitlines() if line.startswith("RUN ")]
    (options,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ENV JDK_JAVA_OPTIONS=")]
    under = lambda command: command.replace(APP, f"{root}{APP}").replace("java ", f"{_java()} ")
    _classpath_under(root)
    done = subprocess.run(["sh", "-c", under(run)], cwd=root, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return under(options)


def run_from_image(image: Image, root: Path, command: list, **popen) -> subprocess.Popen:
    """The image's command with this machine's java and the image's files under ``root``."""
    _classpath_under(root)
    argv = [_java() if command[0] == "java" else command[0]]
    argv += [arg.replace(f"@{APP}", f"@{root}{APP}") for arg in command[1:]]
    return subprocess.Popen(argv, cwd=root, stdin=subprocess.DEVNULL, **popen)


def test_a_node_started_from_the_image_serves_a_dataset(image, sample_table, tmp_path):
    root = image.unpack(image.layers[1:], tmp_path / "root")
    # The class-data-sharing archive, trained by the Dockerfile's commands on top of Jib's image.
    archive_options = train_class_archive(root)
    archive = root / APP.lstrip("/") / "floe-node.jsa"
    assert archive_options == f"-XX:SharedArchiveFile={archive}" and archive.stat().st_size > 10_000_000
    port = free_port()
    settings = [f"-Dfloe.flight.port={port}", "-Dfloe.flight.bind-host=127.0.0.1", "-Dfloe.management.enabled=false",
                "-Dpekko.remote.artery.canonical.port=0", "-Dpekko.remote.artery.canonical.hostname=127.0.0.1",
                "-Dfloe.security.ticket-secret=image-test-ticket-secret-0123456789",
                "-Dfloe.security.auth.anonymous=operator", "-Dfloe.security.allowed-locations=*", "-Xmx512m"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_", "JAVA_TOOL"))}
    env.update(AWS_EC2_METADATA_DISABLED="true", JAVA_TOOL_OPTIONS=" ".join(settings),
               JDK_JAVA_OPTIONS=archive_options)
    log = tmp_path / "node.log"
    with open(log, "wb") as out:
        node = run_from_image(image, root, image.config["Entrypoint"], stdout=out, stderr=subprocess.STDOUT, env=env)
    address = f"grpc+tcp://127.0.0.1:{port}"
    try:
        with FloeClient(address, timeout=10.0) as client:
            deadline = time.monotonic() + 120
            while True:
                assert node.poll() is None, log.read_text()[-4000:]
                try:
                    client.list()
                    break
                except FloeError:
                    assert time.monotonic() < deadline, log.read_text()[-4000:]
                    time.sleep(0.5)
            assert str(archive) in Path(f"/proc/{node.pid}/maps").read_text(), "the node did not map its archive"
            status = client.load("from-image", str(sample_table), columns=["id"])
            assert status["state"] == "READY" and status["rows"] == ROWS
            ids = [i for batch in client.read_shard("from-image") for i in batch.column(0).to_pylist()]
            assert sorted(ids) == list(range(ROWS))

        # The TrainJob dataset-initializer step runs from the same layers.
        initializer = [*image.config["Entrypoint"][:-1], "io.floe.initializer.DatasetInitializer",
                       "--address", address, "--storage-uri", str(sample_table), "--dataset", "initialized",
                       "--poll", "PT0.2S"]
        done = run_from_image(image, root, initializer, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**env, "JAVA_TOOL_OPTIONS": ""})
        out, _ = done.communicate(timeout=120)
        assert done.returncode == 0, out
        assert "Dataset 'initialized' is READY" in out
    finally:
        node.send_signal(signal.SIGTERM)
        try:
            node.wait(timeout=60)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
