"""Real servers the table tests run beside Floe, each a process on 127.0.0.1 stopped by its PID:
moto's S3 and STS server (PyPI ``moto[server]``), and Iceberg's REST catalog server (the
``test-servers`` module's ``LoopbackCatalogServer``, built by Maven)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[2]

# moto accepts any key; these are what PyIceberg and the nodes present.
ACCESS_KEY = "floe-test-key"
SECRET_KEY = "floe-test-secret"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


class MotoServer:
    """moto's server: S3 (path-style) and STS, including ``AssumeRoleWithWebIdentity``."""

    def __init__(self, log: Path):
        executable = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which("moto_server")
        if executable is None:
            raise RuntimeError("moto_server is not installed (pip install 'moto[server]')")
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._log = open(log, "wb")
        self.process = subprocess.Popen(
            [executable, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=2).read()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"moto_server did not start: {log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.2)

    def s3(self):
        import boto3

        return boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY, region_name=REGION,
        )

    def pyiceberg_properties(self) -> Dict[str, str]:
        """FileIO properties for PyIceberg (and, under the same names, for Floe's catalogs)."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
        }

    def stop(self) -> None:
        _stop(self.process)
        self._log.close()


class RestCatalogServer:
    """Iceberg's REST catalog server as a JVM on 127.0.0.1, its tables in SQLite and on S3."""

    def __init__(self, java: str, log: Path, properties: Dict[str, str]):
        runtime = ROOT / "test-servers" / "target" / "runtime-classpath.txt"
        classes = ROOT / "test-servers" / "target" / "classes"
        if not runtime.exists() or not classes.exists():
            raise RuntimeError(f"{runtime} is missing: build the repository first (mvn -B -q -DskipTests package)")
        classpath = f"{classes}:{runtime.read_text().strip()}"
        self._log = open(log, "wb")
        self.process = subprocess.Popen(
            [java, "-Xmx256m", "-cp", classpath, "org.apache.iceberg.rest.LoopbackCatalogServer", "port=0",
             *(f"{k}={v}" for k, v in properties.items())],
            stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
                 "AWS_EC2_METADATA_DISABLED": "true"},
        )
        line = self.process.stdout.readline().decode().strip()
        if not line.startswith("LISTENING "):
            self.stop()
            raise RuntimeError(f"The REST catalog server did not start ({line!r}): {log.read_text(errors='replace')[-2000:]}")
        self.uri = f"http://127.0.0.1:{int(line.split()[1])}"

    def stop(self) -> None:
        _stop(self.process)
        self._log.close()
