"""The Helm chart (k8s/helm/floe): `helm lint`, `helm template` rendered with several values, every
object checked against Kubernetes' own schemas (kubernetes-validate), the memory settings derived
from one value, and the chart kept in step with the kustomize base (k8s/base)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

yaml = pytest.importorskip("yaml")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "k8s" / "helm" / "floe"
# The oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and a recent one.
KUBERNETES_VERSIONS = ("1.27.0", "1.33.0")


def tool(name: str, installer: str) -> str:
    found = shutil.which(name) or str(Path.home() / "go" / "bin" / name)
    if not os.access(found, os.X_OK):
        pytest.fail(f"{name} is not installed: run .ci/{installer} (./floe test does)")
    return found


@pytest.fixture(scope="module")
def helm() -> str:
    return tool("helm", "install-helm")


def render(helm: str, release: str = "floe", namespace: str = "data", **values: str) -> List[dict]:
    # helm built by `go install` assumes Kubernetes 1.20 unless told; the chart needs 1.27+.
    command = [helm, "template", release, str(CHART), "--namespace", namespace, "--kube-version", KUBERNETES_VERSIONS[-1]]
    for key, value in values.items():
        if isinstance(value, bool):
            value = str(value).lower()
            command += ["--set", f"{key.replace('__', '.')}={value}"]
        else:
            command += ["--set-string" if isinstance(value, str) else "--set", f"{key.replace('__', '.')}={value}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RenderError(result.stderr)
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


class RenderError(Exception):
    pass


def one(docs: List[dict], kind: str, name: Optional[str] = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} found"
    return found[0]


def container(docs: List[dict]) -> dict:
    (floe,) = one(docs, "StatefulSet")["spec"]["template"]["spec"]["containers"]
    return floe


def env(docs: List[dict]) -> Dict[str, dict]:
    return {e["name"]: e for e in container(docs)["env"]}


def mebibytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()
    return int(number) * (1024 if unit == "Gi" else 1)


def test_lint_passes_strictly(helm):
    result = subprocess.run([helm, "lint", "--strict", "--kube-version", KUBERNETES_VERSIONS[0], str(CHART)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


@pytest.mark.parametrize("values", [{}, {"tls__enabled": False, "authSecretName": "", "podDisruptionBudget__enabled": False},
                                    {"memory": "32Gi", "replicas": 5, "state__storageClassName": "fast"}])
def test_every_rendered_object_is_valid_kubernetes(helm, values):
    docs = render(helm, **values)
    assert {d["kind"] for d in docs} >= {"StatefulSet", "Service", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"}
    for version in KUBERNETES_VERSIONS:
        for doc in docs:
            kubernetes_validate.validate(doc, version, strict=True)


# memory -> (heap Mi, Arrow Mi): heap is 2/9 of the container rounded down to 256Mi (at least
# 512Mi); Arrow is what the heap and 1Gi of JVM overhead leave; direct memory is Arrow + 512Mi.
DERIVED = {"9Gi": (2048, 6144), "4Gi": (768, 2304), "32Gi": (7168, 24576), "6144Mi": (1280, 3840), "2Gi": (512, 512)}


@pytest.mark.parametrize("memory", sorted(DERIVED))
def test_one_memory_value_sets_the_limit_heap_direct_memory_and_arrow_limit(helm, memory):
    heap, arrow = DERIVED[memory]
    docs = render(helm, memory=memory)
    resources = container(docs)["resources"]
    assert mebibytes(resources["limits"]["memory"]) == mebibytes(resources["requests"]["memory"]) == mebibytes(memory)
    assert one(docs, "ConfigMap")["data"]["FLOE_MEMORY_LIMIT"] == f"{arrow}Mi"
    options = env(docs)["JAVA_TOOL_OPTIONS"]["value"].split()
    assert f"-Xmx{heap}m" in options and f"-Xms{heap}m" in options
    assert f"-XX:MaxDirectMemorySize={arrow + 512}m" in options
    assert heap + arrow + 1024 == mebibytes(memory)


@pytest.mark.parametrize("memory, message", [("1Gi", "give at least 2Gi"), ("9GB", "whole number of Mi or Gi")])
def test_a_memory_value_that_cannot_work_is_refused_by_name(helm, memory, message):
    with pytest.raises(RenderError, match=message) as refused:
        render(helm, memory=memory)
    assert memory in str(refused.value)


def test_the_log_format_is_a_value_and_an_unknown_one_is_refused_by_name(helm):
    assert one(render(helm), "ConfigMap")["data"]["FLOE_LOG_FORMAT"] == "json"
    assert one(render(helm, config__logFormat="plain"), "ConfigMap")["data"]["FLOE_LOG_FORMAT"] == "plain"
    with pytest.raises(RenderError, match='config.logFormat must be json or plain: "xml"'):
        render(helm, config__logFormat="xml")


def test_names_follow_the_release_and_discovery_finds_the_pods(helm):
    docs = render(helm, release="prod", namespace="ml")
    statefulset = one(docs, "StatefulSet", "prod-floe")
    pods = statefulset["spec"]["template"]["metadata"]["labels"]
    variables = env(docs)
    # kubernetes-api discovery lists pods by app=<FLOE_SERVICE_NAME>; pod DNS names live under the
    # headless Service the StatefulSet names.
    assert variables["FLOE_SERVICE_NAME"]["value"] == pods["app"] == "prod-floe"
    assert statefulset["spec"]["serviceName"] == "prod-floe"
    assert one(docs, "Service", "prod-floe")["spec"]["clusterIP"] == "None"
    assert one(docs, "Service", "prod-floe-flight")["spec"]["selector"] == {"app": "prod-floe"}
    assert variables["FLOE_FLIGHT_ADVERTISED_HOST"]["value"] == "$(POD_NAME).prod-floe.$(POD_NAMESPACE).svc"
    binding = one(docs, "RoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "prod-floe", "namespace": "ml"}]
    assert statefulset["spec"]["template"]["spec"]["serviceAccountName"] == "prod-floe"


def test_tls_and_auth_mounts_follow_their_values(helm):
    plain = render(helm, tls__enabled=False, authSecretName="")
    assert not {"FLOE_TLS_CERT_FILE", "FLOE_REMOTE_TRANSPORT", "FLOE_AUTH_TOKENS_FILE"} & set(env(plain))
    assert {m["name"] for m in container(plain)["volumeMounts"]} == {"tmp", "state"}
    secured = render(helm)
    assert env(secured)["FLOE_REMOTE_TRANSPORT"]["value"] == "tls-tcp"
    assert {m["name"] for m in container(secured)["volumeMounts"]} == {"tmp", "state", "auth", "tls"}


def strip(doc: dict) -> dict:
    """What both renderings must agree on: everything but labels, annotations, the RoleBinding
    subject's namespace and the image (kustomize overlays set namespaces and images; Helm writes
    its own)."""
    doc = yaml.safe_load(yaml.safe_dump(doc))
    for meta in (doc["metadata"], doc.get("spec", {}).get("template", {}).get("metadata", {})):
        meta.pop("labels", None)
        meta.pop("annotations", None)
        meta.pop("namespace", None)
    for subject in doc.get("subjects", []):
        subject.pop("namespace", None)
    if doc["kind"] == "ConfigMap":
        doc["data"]["FLOE_MEMORY_LIMIT"] = mebibytes(doc["data"]["FLOE_MEMORY_LIMIT"])
    if doc["kind"] == "StatefulSet":
        for c in doc["spec"]["template"]["spec"]["containers"]:
            c.pop("image")
            for quantity in ("requests", "limits"):
                c["resources"][quantity]["memory"] = mebibytes(c["resources"][quantity]["memory"])
    return doc


def test_the_chart_renders_what_the_kustomize_base_holds(helm):
    kustomize = tool("kustomize", "install-kustomize")
    base = subprocess.run([kustomize, "build", str(ROOT / "k8s" / "base")], capture_output=True, text=True,
                          timeout=120, check=True)
    expected = {(d["kind"], d["metadata"]["name"]): strip(d) for d in yaml.safe_load_all(base.stdout) if d}
    rendered = {(d["kind"], d["metadata"]["name"]): strip(d) for d in render(helm, release="floe")}
    assert rendered.keys() == expected.keys()
    for key, doc in expected.items():
        assert rendered[key] == doc, f"{key} differs between the chart and k8s/base"
