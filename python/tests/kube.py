"""A real Kubernetes control plane's front half on 127.0.0.1: etcd (Debian's etcd-server) and
kube-apiserver (built from k8s.io/kubernetes by .ci/install-kube-apiserver), with RBAC,
ServiceAccount tokens signed by a key made here, its serving certificate from a CA made here, and
an admin user (a static token in group system:masters) that kubectl and helm act as.

There is no controller manager, scheduler or kubelet: objects are stored and admitted (schemas,
defaults, PodSecurity, the ServiceAccount plugin, RBAC) but nothing runs them. A test plays the
StatefulSet controller (creates the pods) and the kubelet (PATCHes pods/status, mints the pod's
ServiceAccount token through TokenRequest, starts the process). Both servers are stopped by PID."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from certificates import Authority, _openssl
from servers import free_port

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / ".ci" / "install-kube-apiserver"
ADMIN_TOKEN = "floe-test-admin-token"
START_TIMEOUT = 120.0


class Unavailable(Exception):
    """The binaries are missing and could not be built (no Go toolchain, no module proxy)."""


def _stop(process: subprocess.Popen, grace: float = 20) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _works(command: Sequence[str]) -> bool:
    try:
        return subprocess.run(list(command), capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def binaries() -> Dict[str, str]:
    """kube-apiserver, etcd and kubectl: runs the installer, which returns at once when they are
    there and builds them otherwise (minutes; CI runs it before the tests)."""
    result = subprocess.run([str(INSTALLER)], capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise Unavailable(f"{INSTALLER.name} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    apiserver = Path(result.stdout.strip().splitlines()[-1])
    etcd = shutil.which("etcd")
    kubectl = shutil.which("kubectl")
    if kubectl is None or not _works([kubectl, "version", "--client"]):
        kubectl = str(apiserver.parent / "kubectl")
    missing = [p for p in (str(apiserver), etcd, kubectl) if p is None or not os.access(p, os.X_OK)]
    if missing:
        raise Unavailable(f"{INSTALLER.name} left no executable {missing}")
    return {"kube-apiserver": str(apiserver), "etcd": etcd, "kubectl": kubectl}


class ApiServer:
    """etcd and kube-apiserver in `directory`, on free ports of 127.0.0.1; `kubeconfig` makes
    kubectl and helm the admin. `ca` is what a pod finds at .../serviceaccount/ca.crt."""

    def __init__(self, directory: Path, tools: Dict[str, str]):
        self.directory = directory
        self.kubectl_path = tools["kubectl"]
        self._processes: List[subprocess.Popen] = []
        self._logs = []
        pki = directory / "pki"
        authority = Authority.create(pki, "kubernetes-ca")
        serving = authority.issue("kube-apiserver")
        self.ca = authority.cert
        # The key pair that signs and verifies ServiceAccount tokens.
        _openssl(pki, "genrsa", "-out", "service-account.key", "2048")
        _openssl(pki, "rsa", "-in", "service-account.key", "-pubout", "-out", "service-account.pub")
        # The audit log keeps what ServiceAccounts asked of pods: the tests read who listed them
        # and what the server answered.
        self.audit_log = directory / "audit.log"
        policy = directory / "audit-policy.json"
        policy.write_text(json.dumps({
            "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
            "rules": [{"level": "Metadata", "userGroups": ["system:serviceaccounts"],
                       "resources": [{"group": "", "resources": ["pods"]}]},
                      {"level": "None"}]}))
        tokens = pki / "tokens.csv"
        tokens.write_text(f"{ADMIN_TOKEN},floe-test-admin,floe-test-admin,system:masters\n")

        etcd_port, peer_port = free_port(), free_port()
        self.port = free_port()
        self.log = directory / "kube-apiserver.log"
        try:
            self._start("etcd", [
                tools["etcd"], "--name", "default", "--data-dir", str(directory / "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-cluster", f"default=http://127.0.0.1:{peer_port}",
            ], directory / "etcd.log")
            self._start("kube-apiserver", [
                tools["kube-apiserver"], f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
                f"--cert-dir={pki}", f"--tls-cert-file={serving.cert}", f"--tls-private-key-file={serving.key}",
                f"--client-ca-file={authority.cert}",
                f"--service-account-key-file={pki / 'service-account.pub'}",
                f"--service-account-signing-key-file={pki / 'service-account.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--token-auth-file={tokens}", "--authorization-mode=RBAC",
                # Configuration only: nothing is ever sent to this range.
                "--service-cluster-ip-range=10.96.0.0/24",
                # No Service endpoints for the API server itself (it would advertise 127.0.0.1).
                "--endpoint-reconciler-type=none", "--profiling=false",
                f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}",
            ], self.log)
            self.kubeconfig = directory / "kubeconfig"
            self.kubeconfig.write_text(json.dumps({
                "apiVersion": "v1", "kind": "Config", "current-context": "admin",
                "clusters": [{"name": "test", "cluster": {"server": self.url, "certificate-authority": str(self.ca)}}],
                "users": [{"name": "admin", "user": {"token": ADMIN_TOKEN}}],
                "contexts": [{"name": "admin", "context": {"cluster": "test", "user": "admin"}}],
            }))
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _start(self, name: str, command: List[str], log: Path) -> None:
        handle = open(log, "wb")
        self._logs.append(handle)
        self._processes.append(subprocess.Popen(command, cwd=self.directory, stdout=handle,
                                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            result = self.run("get", "--raw", "/readyz", check=False, timeout=10)
            if result.returncode == 0 and result.stdout.strip() == "ok":
                return
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"kube-apiserver not ready in {START_TIMEOUT:.0f} s:\n{self.tail()}")
            time.sleep(0.5)

    def tail(self, lines: int = 30) -> str:
        out = []
        for log in (self.directory / "etcd.log", self.log):
            if log.exists():
                out.append(f"== {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(out)

    @property
    def environment(self) -> Dict[str, str]:
        """kubectl's and helm's environment: this server, as the admin."""
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "HELM_"))}
        return {**base, "KUBECONFIG": str(self.kubeconfig), "HELM_CACHE_HOME": str(self.directory / "helm-cache"),
                "HELM_CONFIG_HOME": str(self.directory / "helm-config"),
                "HELM_DATA_HOME": str(self.directory / "helm-data")}

    def run(self, *args: str, input: Optional[str] = None, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess:
        """kubectl ARGS as the admin."""
        return self.command([self.kubectl_path, *args], input=input, check=check, timeout=timeout)

    def command(self, command: List[str], input: Optional[str] = None, check: bool = True,
                timeout: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run(command, input=input, capture_output=True, text=True, timeout=timeout,
                                env=self.environment)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return result

    def version(self) -> str:
        """The server's version, e.g. v1.37.2."""
        return json.loads(self.run("version", "-o", "json").stdout)["serverVersion"]["gitVersion"]

    def get(self, *args: str) -> dict:
        return json.loads(self.run("get", "-o", "json", *args).stdout)

    def create(self, manifest: dict) -> dict:
        return json.loads(self.run("create", "-o", "json", "-f", "-", input=json.dumps(manifest)).stdout)

    def apply(self, manifest: dict, *args: str) -> dict:
        return json.loads(self.run("apply", "-o", "json", *args, "-f", "-", input=json.dumps(manifest)).stdout)

    def pod_lists(self, user: str) -> List[dict]:
        """The audit events of `user` listing pods: verb, namespace, user agent, answer code."""
        events = []
        if self.audit_log.exists():
            for line in self.audit_log.read_text().splitlines():
                event = json.loads(line)
                if event["user"]["username"] == user and event["verb"] == "list":
                    events.append({"namespace": event["objectRef"].get("namespace"),
                                   "userAgent": event.get("userAgent", ""),
                                   "code": event.get("responseStatus", {}).get("code")})
        return events

    def stop(self) -> None:
        # kube-apiserver drains for 10 s or more after SIGTERM; it holds nothing worth a drain here.
        for process in reversed(self._processes):
            _stop(process, grace=3)
        for handle in self._logs:
            handle.close()
