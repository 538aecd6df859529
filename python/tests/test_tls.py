"""TLS with certificates made by openssl for the test: a two-node cluster whose nodes talk to
each other over Pekko's TLS transport and serve Flight over grpc+tls, read by the Python client
with the CA bundle; and a node that asks for client certificates (mutual TLS)."""

from __future__ import annotations

import collections
import shutil
import time

import pytest

from floe_client import FloeClient, FloeError
from conftest import ROWS, Node, free_port
from certificates import Authority


@pytest.fixture(scope="module")
def authority(tmp_path_factory):
    return Authority.create(tmp_path_factory.mktemp("ca"), "floe-test-ca")


def tls_settings(pair, remote_dir=None, client_ca=None):
    settings = {"floe.security.tls.cert-file": str(pair.cert), "floe.security.tls.key-file": str(pair.key)}
    if client_ca is not None:
        settings["floe.security.tls.client-ca-file"] = str(client_ca)
    if remote_dir is not None:
        settings["pekko.remote.artery.transport"] = "tls-tcp"
        settings["pekko.remote.artery.ssl.rotating-keys-engine.secret-mount-point"] = str(remote_dir)
    return settings


def test_a_cluster_over_tls_serves_grpc_tls_readers(classpath, sample_table, authority, tmp_path):
    node_pair = authority.issue("floe-node")
    # Pekko's rotating-keys engine reads tls.key, tls.crt and ca.crt from one directory, as a
    # Kubernetes TLS Secret mounts them.
    remote = tmp_path / "remote-tls"
    remote.mkdir()
    shutil.copy(node_pair.key, remote / "tls.key")
    shutil.copy(node_pair.cert, remote / "tls.crt")
    shutil.copy(authority.cert, remote / "ca.crt")
    seed = free_port()
    common = dict(tls_settings(node_pair, remote), **{"pekko.cluster.seed-nodes.0": f"pekko://floe@127.0.0.1:{seed}"})
    trusted = {"tls_root_certs": str(authority.cert)}
    first = Node(classpath, tmp_path / "a.log", dict(common, **{"pekko.remote.artery.canonical.port": str(seed)}),
                 client_options=trusted)
    second = Node(classpath, tmp_path / "b.log", common, client_options=trusted)
    try:
        first.wait_ready()
        second.wait_ready()
        assert first.address.startswith("grpc+tls://")
        with FloeClient(first.address, timeout=30, tls_root_certs=authority.cert) as client:
            deadline = time.monotonic() + 120
            while sum(m["status"] == "Up" for m in client.cluster()["members"]) < 2:
                assert time.monotonic() < deadline, f"no cluster over TLS:\n{first.tail()}\n{second.tail()}"
                time.sleep(0.5)
            assert client.load("tls", str(sample_table), columns=["id"])["state"] == "READY"
        # Read through the other node: endpoints name grpc+tls locations, fetched with the same CA.
        with FloeClient(second.address, timeout=30, tls_root_certs=authority.cert.read_bytes()) as client:
            info = client.plan("tls")
            assert {e.locations[0].uri.decode().split("://")[0] for e in info.endpoints} == {"grpc+tls"}
            ids = [i for batch in client.read_shard("tls") for i in batch.column(0).to_pylist()]
        assert collections.Counter(ids) == collections.Counter(range(ROWS))
        # Without the CA, or in plain text, nothing gets through.
        with FloeClient(first.address, timeout=10) as untrusting:
            with pytest.raises(FloeError):
                untrusting.list()
        with FloeClient(first.address.replace("grpc+tls", "grpc+tcp"), timeout=10) as plain:
            with pytest.raises(FloeError):
                plain.list()
    finally:
        second.kill()
        first.kill()


def test_mutual_tls_asks_for_a_client_certificate(classpath, sample_table, authority, tmp_path):
    node_pair = authority.issue("floe-mtls-node")
    clients = Authority.create(tmp_path / "clients", "trainers-ca")
    trainer = clients.issue("trainer", server=False)
    stranger = Authority.create(tmp_path / "strangers", "strangers-ca").issue("stranger", server=False)
    certificate = {"tls_root_certs": authority.cert, "cert_chain": trainer.cert, "private_key": trainer.key}
    node = Node(classpath, tmp_path / "node.log", tls_settings(node_pair, client_ca=clients.cert),
                client_options=certificate)
    try:
        node.wait_ready()
        with FloeClient(node.address, timeout=30, **certificate) as client:
            assert client.load("mtls", str(sample_table), columns=["id"])["state"] == "READY"
            assert sum(b.num_rows for b in client.read_shard("mtls")) == ROWS
        with FloeClient(node.address, timeout=10, tls_root_certs=authority.cert) as anonymous:
            with pytest.raises(FloeError):
                anonymous.list()
        with FloeClient(node.address, timeout=10, tls_root_certs=authority.cert, cert_chain=stranger.cert,
                        private_key=stranger.key) as other:
            with pytest.raises(FloeError):
                other.list()
    finally:
        node.stop()


def test_tls_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="go together"):
        FloeClient("grpc+tls://127.0.0.1:1", cert_chain=b"x")
    with pytest.raises(ValueError, match="Unreadable tls_root_certs file"):
        FloeClient("grpc+tls://127.0.0.1:1", tls_root_certs=tmp_path / "missing.pem")
