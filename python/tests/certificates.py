"""Certificate authorities and the certificates they sign, made with the openssl command line for
TLS tests: RSA keys in unencrypted PKCS#8 PEM (what Floe's Flight server and Pekko's rotating-keys
engine both read); server certificates name 127.0.0.1 and localhost."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


def _openssl(directory: Path, *args: str) -> None:
    result = subprocess.run(["openssl", *args], cwd=directory, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{result.stdout}{result.stderr}")


@dataclass(frozen=True)
class Pair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class Authority:
    directory: Path
    name: str

    @staticmethod
    def create(directory: Path, name: str) -> "Authority":
        directory.mkdir(parents=True, exist_ok=True)
        _openssl(directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
                 "-keyout", f"{name}.key", "-out", f"{name}.crt")
        return Authority(directory, name)

    @property
    def cert(self) -> Path:
        return self.directory / f"{self.name}.crt"

    def issue(self, cn: str, server: bool = True) -> Pair:
        ext = self.directory / f"{cn}.ext"
        ext.write_text(
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"
            if server else "extendedKeyUsage=clientAuth\n"
        )
        _openssl(self.directory, "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}",
                 "-keyout", f"{cn}.key", "-out", f"{cn}.csr")
        _openssl(self.directory, "x509", "-req", "-in", f"{cn}.csr", "-CA", f"{self.name}.crt",
                 "-CAkey", f"{self.name}.key", "-CAcreateserial", "-days", "2", "-extfile", f"{cn}.ext",
                 "-out", f"{cn}.crt")
        return Pair(self.directory / f"{cn}.crt", self.directory / f"{cn}.key")
