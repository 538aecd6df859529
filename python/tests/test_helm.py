"""The Helm chart (k8s/helm/floe): `helm lint`, `helm template` with its defaults and with each
documented override, every object checked against Kubernetes' own schemas (kubernetes-validate;
the ServiceMonitor against prometheus-operator's CRD), values the schema must refuse, the Secrets
it generates holding what the node reads, the memory rule shared with bin/floe-jvm-options, NOTES
whose commands run as written, nodes started from what a default install renders, and the chart
kept in step with the kustomize base (k8s/base)."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

yaml = pytest.importorskip("yaml")
kubernetes_validate = pytest.importorskip("kubernetes_validate")
jsonschema = pytest.importorskip("jsonschema")
flight = pytest.importorskip("pyarrow.flight")

from conftest import _die_with_parent, _java, end_process, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "k8s" / "helm" / "floe"
# The oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and a recent one.
KUBERNETES_VERSIONS = ("1.27.0", "1.33.0")
PROMETHEUS_OPERATOR = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
# NOTES.txt rendered by `helm template` (which leaves NOTES out) through `tpl`, in the same render
# as the Secrets its commands read.
NOTES_TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: rendered-notes
data:
  notes: {{ tpl (.Files.Get "notes.tpl") . | toJson }}
"""


def tool(name: str, installer: str) -> str:
    found = shutil.which(name) or str(Path.home() / "go" / "bin" / name)
    if not os.access(found, os.X_OK):
        pytest.fail(f"{name} is not installed: run .ci/{installer} (./floe test does)")
    return found


@pytest.fixture(scope="module")
def helm() -> str:
    return tool("helm", "install-helm")


class RenderError(Exception):
    pass


class Render:
    """One `helm template`: its objects and its NOTES."""

    def __init__(self, docs: List[dict], notes: str, namespace: str):
        self.docs = docs
        self.notes = notes
        self.namespace = namespace

    def one(self, kind: str, name: Optional[str] = None) -> dict:
        return one(self.docs, kind, name)

    def secret(self, name: str) -> Dict[str, bytes]:
        return {k: base64.b64decode(v) for k, v in self.one("Secret", name)["data"].items()}


def render_full(helm: str, tmp_path: Path, release: str = "floe", namespace: str = "data",
                values: Optional[dict] = None, **sets) -> Render:
    chart = tmp_path / "chart"
    if not chart.exists():
        shutil.copytree(CHART, chart, symlinks=False)
        shutil.copy(CHART / "templates" / "NOTES.txt", chart / "notes.tpl")
        (chart / "templates" / "zz-notes.yaml").write_text(NOTES_TEMPLATE)
    docs = template(helm, chart, release, namespace, values, sets)
    notes = one(docs, "ConfigMap", "rendered-notes")["data"]["notes"]
    return Render([d for d in docs if d["metadata"]["name"] != "rendered-notes"], notes, namespace)


def render(helm: str, release: str = "floe", namespace: str = "data", values: Optional[dict] = None,
           **sets) -> List[dict]:
    return template(helm, CHART, release, namespace, values, sets)


def template(helm: str, chart: Path, release: str, namespace: str, values: Optional[dict], sets: dict) -> List[dict]:
    # helm built by `go install` assumes Kubernetes 1.20 unless told; the chart needs 1.27+.
    command = [helm, "template", release, str(chart), "--namespace", namespace, "--kube-version", KUBERNETES_VERSIONS[-1]]
    if values is not None:
        command += ["--values", "-"]
    for key, value in sets.items():
        if isinstance(value, bool):
            command += ["--set", f"{key.replace('__', '.')}={str(value).lower()}"]
        else:
            command += ["--set-string" if isinstance(value, str) else "--set", f"{key.replace('__', '.')}={value}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            input=yaml.safe_dump(values) if values is not None else None)
    if result.returncode != 0:
        raise RenderError(result.stderr)
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def one(docs: List[dict], kind: str, name: Optional[str] = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} found"
    return found[0]


def pod(docs: List[dict]) -> dict:
    return one(docs, "StatefulSet")["spec"]["template"]["spec"]


def container(docs: List[dict]) -> dict:
    (floe,) = pod(docs)["containers"]
    return floe


def env(docs: List[dict]) -> Dict[str, dict]:
    return {e["name"]: e for e in container(docs)["env"]}


def mebibytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()
    return int(number) * (1024 if unit == "Gi" else 1)


# Each documented override (values.yaml), as a values file.
OVERRIDES = {
    "defaults": {},
    "plain, open, no PDB": {"tls": {"enabled": False}, "auth": {"enabled": False},
                            "podDisruptionBudget": {"enabled": False}},
    "bigger": {"memory": "32Gi", "replicas": 5, "state": {"storageClassName": "fast"}, "cpu": "8"},
    "storage": {"storage": {"allowedLocations": ["s3://lake/warehouse/", "s3://scratch/"],
                            "s3": {"endpoint": "http://minio.storage.svc:9000", "pathStyleAccess": True,
                                   "region": "eu-west-1", "credentialsSecret": "floe-s3"},
                            "properties": {"s3.sse.type": "kms", "client.region": "eu-west-1"}}},
    "catalogs": {"catalogs": {"lake": {"type": "rest", "uri": "http://iceberg-rest.lake.svc:8181",
                                       "warehouse": "s3://lake/",
                                       "header.X-Iceberg-Access-Delegation": "vended-credentials"},
                              "pg": {"type": "jdbc", "uri": "jdbc:postgresql://db/iceberg", "jdbc.user": "floe"}},
                 "secretProperties": [{"catalog": "lake", "property": "credential", "secretName": "lake-catalog",
                                       "key": "credential"},
                                      {"catalog": "pg", "property": "jdbc.password", "secretName": "pg", "key": "password"},
                                      {"property": "gcs.oauth2.token", "secretName": "gcs", "key": "token"}]},
    "existing secrets": {"tls": {"existingSecret": "my-tls"}, "auth": {"existingSecret": "my-tokens"},
                         "ticket": {"existingSecret": "my-ticket"}},
    "identity and names": {"serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/floe"}},
                           "tls": {"extraDnsNames": ["floe.example.com"]}, "clusterDomain": "k8s.internal",
                           "image": {"repository": "registry.example.com/floe", "tag": "0.1.0"}},
    "monitoring": {"metrics": {"scrapeAnnotations": False,
                               "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
                               "grafanaDashboard": {"enabled": True}}},
    "anonymous readers beside tokens": {"auth": {"anonymous": "reader"}},
    "kubernetes callers, confined flight": {
        "auth": {"kubernetes": {"enabled": True, "audience": "floe-prod"}},
        "networkPolicy": {"metricsFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                                           "podSelector": {"matchLabels": {"app": "prometheus"}}}],
                          "flightFrom": [{"namespaceSelector": {"matchLabels": {"floe-client": "true"}}}]}},
    "no network policy": {"networkPolicy": {"enabled": False}},
}


@pytest.fixture(scope="module")
def crds(tmp_path_factory) -> Dict[str, dict]:
    """{kind: JSON Schema} of prometheus-operator's CRDs, from its module on the Go module proxy."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("No go toolchain: it fetches prometheus-operator's CRDs from the Go module proxy")
    result = subprocess.run(
        [go, "mod", "download", "-json", PROMETHEUS_OPERATOR], cwd=tmp_path_factory.mktemp("go"),
        capture_output=True, text=True, timeout=300, env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"},
    )
    assert result.returncode == 0, result.stderr
    crd = yaml.safe_load((Path(json.loads(result.stdout)["Dir"]) / "example" / "prometheus-operator-crd"
                          / "monitoring.coreos.com_servicemonitors.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return {"ServiceMonitor": strict(version["schema"]["openAPIV3Schema"])}


def strict(schema):
    """Unknown fields refused wherever the CRD lists an object's fields (as test_kubeflow.py)."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def validate(doc: dict, crds: Dict[str, dict]) -> None:
    if doc["apiVersion"] == "monitoring.coreos.com/v1":
        body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
        schema = crds[doc["kind"]]
        schema = {**schema, "properties": {k: v for k, v in schema["properties"].items()
                                           if k not in ("apiVersion", "kind", "metadata")}}
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in jsonschema.Draft7Validator(schema).iter_errors(body)]
        assert errors == [], doc["kind"]
        return
    for version in KUBERNETES_VERSIONS:
        kubernetes_validate.validate(doc, version, strict=True)


def test_lint_passes_strictly(helm):
    result = subprocess.run([helm, "lint", "--strict", "--kube-version", KUBERNETES_VERSIONS[0], str(CHART)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


@pytest.mark.parametrize("case", sorted(OVERRIDES))
def test_every_rendered_object_is_valid_kubernetes(helm, crds, case):
    docs = render(helm, values=OVERRIDES[case])
    assert {d["kind"] for d in docs} >= {"StatefulSet", "Service", "ConfigMap", "Role", "RoleBinding", "ServiceAccount"}
    for doc in docs:
        validate(doc, crds)


def secret_references(docs: List[dict]) -> List[Tuple[str, Optional[str]]]:
    """(Secret, key) for every secretKeyRef of the node container; (Secret, None) for volumes."""
    refs = [(e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])
            for e in container(docs)["env"] if "secretKeyRef" in e.get("valueFrom", {})]
    refs += [(v["secret"]["secretName"], None) for v in pod(docs)["volumes"] if "secret" in v]
    return refs


def test_a_default_install_needs_no_secret_it_does_not_create(helm):
    docs = render(helm)
    created = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "Secret"}
    references = secret_references(docs)
    assert {name for name, _ in references} == {"floe-ticket", "floe-auth", "floe-tls"}
    for name, key in references:
        assert name in created, f"the pods need Secret {name}, which the chart does not create"
        assert key is None or key in created[name], f"Secret {name} has no key {key}"


def test_named_secrets_are_used_and_not_created(helm):
    docs = render(helm, values=OVERRIDES["existing secrets"])
    assert [d for d in docs if d["kind"] == "Secret"] == []
    assert set(secret_references(docs)) == {("my-ticket", "secret"), ("my-tokens", None), ("my-tls", None)}


def test_the_generated_ticket_secret_and_tokens_are_what_the_node_reads(helm, tmp_path):
    rendered = render_full(helm, tmp_path)
    variables = env(rendered.docs)
    ref = variables["FLOE_TICKET_SECRET"]["valueFrom"]["secretKeyRef"]
    # TicketSigner wants at least 16 bytes.
    assert len(rendered.secret(ref["name"])[ref["key"]]) >= 16

    mounts = {m["name"]: m["mountPath"] for m in container(rendered.docs)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod(rendered.docs)["volumes"]}
    tokens_file = variables["FLOE_AUTH_TOKENS_FILE"]["value"]
    assert tokens_file == mounts["auth"] + "/tokens"
    tokens = rendered.secret(volumes["auth"]["secret"]["secretName"])["tokens"].decode()
    # TokenFile's format: "<role> <name> <token>", '#' comments, tokens of 16 characters or more.
    lines = [line.split() for line in tokens.splitlines() if line.strip() and not line.startswith("#")]
    assert all(len(fields) == 3 and fields[0] in ("reader", "operator") and len(fields[2]) >= 16 for fields in lines)
    assert sorted(fields[0] for fields in lines) == ["operator", "reader"]
    assert len({fields[2] for fields in lines}) == 2
    assert "FLOE_AUTH_ANONYMOUS" not in variables


def openssl(*args: str, cwd: Path) -> str:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"openssl {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout


@pytest.mark.parametrize("namespace, release, fullname", [("data", "floe", "floe"), ("ml", "prod", "prod-floe")])
def test_the_generated_certificate_names_what_readers_connect_to(helm, tmp_path, namespace, release, fullname):
    rendered = render_full(helm, tmp_path, release=release, namespace=namespace)
    tls = rendered.one("Secret", f"{fullname}-tls")
    assert tls["type"] == "kubernetes.io/tls"
    files = rendered.secret(f"{fullname}-tls")
    assert set(files) == {"tls.crt", "tls.key", "ca.crt"}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    # Flight (FloeSettings) reads the cert and key files the variables name; Pekko's rotating-keys
    # engine reads tls.key, tls.crt and ca.crt from the directory FLOE_REMOTE_TLS_DIR names.
    variables = env(rendered.docs)
    mount = {m["name"]: m["mountPath"] for m in container(rendered.docs)["volumeMounts"]}["tls"]
    assert variables["FLOE_TLS_CERT_FILE"]["value"] == f"{mount}/tls.crt"
    assert variables["FLOE_TLS_KEY_FILE"]["value"] == f"{mount}/tls.key"
    assert variables["FLOE_REMOTE_TLS_DIR"]["value"] == mount
    assert variables["FLOE_REMOTE_TRANSPORT"]["value"] == "tls-tcp"

    assert "OK" in openssl("verify", "-CAfile", "ca.crt", "tls.crt", cwd=tmp_path)
    text = openssl("x509", "-in", "tls.crt", "-noout", "-text", cwd=tmp_path)
    names = set(re.findall(r"DNS:([^,\s]+)", text))
    # The entry Service, and every pod's advertised name ($(POD_NAME).<fullname>.<ns>.svc).
    assert f"{fullname}-flight.{namespace}.svc" in names
    advertised = variables["FLOE_FLIGHT_ADVERTISED_HOST"]["value"]
    assert advertised == f"$(POD_NAME).{fullname}.$(POD_NAMESPACE).svc"
    assert f"*.{fullname}.{namespace}.svc" in names
    # Pekko's mutual TLS uses the one certificate as server and as client.
    assert re.search(r"TLS Web Server Authentication, TLS Web Client Authentication", text)
    # The key is the certificate's.
    modulus = openssl("x509", "-in", "tls.crt", "-noout", "-modulus", cwd=tmp_path)
    assert openssl("rsa", "-in", "tls.key", "-noout", "-modulus", cwd=tmp_path) == modulus


def test_extra_names_and_the_cluster_domain_reach_the_certificate(helm, tmp_path):
    rendered = render_full(helm, tmp_path, values=OVERRIDES["identity and names"])
    (tmp_path / "tls.crt").write_bytes(rendered.secret("floe-tls")["tls.crt"])
    names = set(re.findall(r"DNS:([^,\s]+)", openssl("x509", "-in", "tls.crt", "-noout", "-text", cwd=tmp_path)))
    assert {"floe.example.com", "floe-flight.data.svc.k8s.internal", "*.floe.data.svc.k8s.internal"} <= names
    account = one(rendered.docs, "ServiceAccount")
    assert account["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/floe"}
    assert container(rendered.docs)["image"] == "registry.example.com/floe:0.1.0"


@pytest.mark.parametrize("values, role", [({"auth": {"enabled": False}}, "operator"),
                                          ({"auth": {"enabled": False, "anonymous": "reader"}}, "reader")])
def test_auth_off_lets_callers_in_without_the_auth_secret(helm, values, role):
    docs = render(helm, values=values)
    variables = env(docs)
    # AuthSettings starts a node with a tokens file or an anonymous role: here, the role alone.
    assert "FLOE_AUTH_TOKENS_FILE" not in variables
    assert variables["FLOE_AUTH_ANONYMOUS"]["value"] == role
    assert "auth" not in {v["name"] for v in pod(docs)["volumes"]}
    assert "auth" not in {m["name"] for m in container(docs)["volumeMounts"]}
    assert "floe-auth" not in {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}


def test_auth_off_with_no_anonymous_role_is_refused_by_name(helm):
    with pytest.raises(RenderError, match="auth.enabled=false with auth.anonymous=none"):
        render(helm, auth__enabled=False, auth__anonymous="none")


def test_the_network_policy_lets_only_the_nodes_and_prometheus_reach_management_and_remoting(helm):
    """The management port serves /metrics (job names as labels), membership and the shard layout
    to whoever reaches it: by default only the other nodes and Prometheus may, remoting only the
    nodes, Flight anyone (its calls are authenticated); every port the container opens has a
    rule, by the container's own port names."""
    docs = render(helm)
    policy = one(docs, "NetworkPolicy")
    statefulset = one(docs, "StatefulSet")
    nodes = {"podSelector": {"matchLabels": statefulset["spec"]["selector"]["matchLabels"]}}
    assert policy["spec"]["podSelector"] == nodes["podSelector"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    sources: Dict[str, List[Optional[list]]] = {}
    for rule in policy["spec"]["ingress"]:
        for port in rule["ports"]:
            sources.setdefault(port["port"], []).append(rule.get("from"))
    assert set(sources) == {p["name"] for p in container(docs)["ports"]} == {"flight", "remoting", "management"}
    assert sources["flight"] == [None]
    assert sources["remoting"] == [[nodes]]
    prometheus = {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}
    assert sorted(map(json.dumps, sum(sources["management"], []))) == sorted(map(json.dumps, [nodes, prometheus]))

    confined = render(helm, values=OVERRIDES["kubernetes callers, confined flight"])
    rules = one(confined, "NetworkPolicy")["spec"]["ingress"]
    assert [r.get("from") for r in rules if r["ports"][0]["port"] == "flight"] == [
        [{"namespaceSelector": {"matchLabels": {"floe-client": "true"}}}]]
    assert rules[-1]["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                                  "podSelector": {"matchLabels": {"app": "prometheus"}}}]
    assert not [d for d in render(helm, values=OVERRIDES["no network policy"]) if d["kind"] == "NetworkPolicy"]


def test_kubernetes_callers_let_the_nodes_review_tokens_and_nothing_more(helm):
    docs = render(helm, values=OVERRIDES["kubernetes callers, confined flight"])
    variables = env(docs)
    assert variables["FLOE_AUTH_KUBERNETES"]["value"] == "true"
    assert variables["FLOE_AUTH_KUBERNETES_AUDIENCE"]["value"] == "floe-prod"
    binding = one(docs, "ClusterRoleBinding")
    # system:auth-delegator grants create on tokenreviews and subjectaccessreviews, nothing else.
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "system:auth-delegator"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": one(docs, "ServiceAccount")["metadata"]["name"],
                                    "namespace": "data"}]
    assert "ClusterRoleBinding" not in {d["kind"] for d in render(helm)}
    assert "FLOE_AUTH_KUBERNETES" not in env(render(helm))
    with pytest.raises(RenderError, match="auth.kubernetes.enabled needs auth.enabled"):
        render(helm, values={"auth": {"enabled": False, "anonymous": "reader", "kubernetes": {"enabled": True}}})


def test_tls_off_drops_the_certificate_and_the_tls_transport(helm):
    docs = render(helm, tls__enabled=False)
    assert not {"FLOE_TLS_CERT_FILE", "FLOE_REMOTE_TRANSPORT", "FLOE_REMOTE_TLS_DIR"} & set(env(docs))
    assert {m["name"] for m in container(docs)["volumeMounts"]} == {"tmp", "state", "auth"}
    assert "floe-tls" not in {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}


@pytest.mark.parametrize("values, refused", [
    ({"replicas": "two"}, "/replicas"),
    ({"replicas": -1}, "/replicas"),
    ({"memory": "-9Gi"}, "/memory"),
    ({"memory": "9GB"}, "/memory"),
    ({"state": {"size": "-1Gi"}}, "/state/size"),
    ({"config": {"loadThreads": -2}}, "/config/loadThreads"),
    ({"config": {"logFormat": "xml"}}, "/config/logFormat"),
    ({"auth": {"anonymous": "admin"}}, "/auth/anonymous"),
    ({"auth": {"kubernetes": {"audience": ""}}}, "/auth/kubernetes/audience"),
    ({"networkPolicy": {"prometheus": {}}}, "prometheus"),
    ({"terminationGracePeriodSeconds": "long"}, "/terminationGracePeriodSeconds"),
    # The values before this chart version: refused by name rather than ignored.
    ({"authSecretName": ""}, "authSecretName"),
    ({"ticketSecretName": "floe-ticket"}, "ticketSecretName"),
    ({"tls": {"secretName": "floe-tls"}}, "secretName"),
    ({"storage": {"allowedLocations": ["s3://a/,s3://b/"]}}, "/storage/allowedLocations/0"),
    ({"catalogs": {"lake": {"uri": "http://rest:8181"}}}, "/catalogs/lake"),
    ({"catalogs": {"Lake": {"type": "rest"}}}, "Lake"),
    ({"secretProperties": [{"catalog": "lake", "property": "jdbc.useSSL", "secretName": "s", "key": "k"}]},
     "/secretProperties/0/property"),
])
def test_the_schema_refuses_wrong_values_by_name(helm, values, refused):
    with pytest.raises(RenderError, match="values don't meet the specifications of the schema") as error:
        render(helm, values=values)
    assert refused in str(error.value)


# memory -> Arrow limit (Mi): the most that leaves Arrow + heap + 768Mi within memory, rounded down
# to 256Mi, with the heap bin/floe-jvm-options gives (Arrow / 8 within 512Mi..4Gi).
DERIVED = {"9Gi": 7424, "4Gi": 2816, "32Gi": 28416, "6144Mi": 4608, "1792Mi": 512, "64Gi": 60672}


@pytest.mark.parametrize("memory", sorted(DERIVED))
def test_one_memory_value_sizes_the_node_as_the_launcher_does(helm, memory):
    arrow = DERIVED[memory]
    docs = render(helm, memory=memory)
    resources = container(docs)["resources"]
    assert mebibytes(resources["limits"]["memory"]) == mebibytes(resources["requests"]["memory"]) == mebibytes(memory)
    assert one(docs, "ConfigMap", "floe-config")["data"]["FLOE_MEMORY_LIMIT"] == f"{arrow}Mi"
    # The launcher's own output for that Arrow limit, word for word.
    launcher = subprocess.run([str(ROOT / "bin" / "floe-jvm-options")], env={**os.environ, "FLOE_MEMORY_LIMIT": f"{arrow}Mi"},
                              capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    options = env(docs)["JAVA_TOOL_OPTIONS"]["value"]
    assert f" {launcher} " in f" {options} "
    heap = int(re.search(r"-Xmx(\d+)m", launcher).group(1))
    assert heap == min(max(arrow // 8, 512), 4096)
    assert f"-XX:MaxDirectMemorySize={arrow + 256}m" in launcher
    # The rule's room for the JVM itself, and no more than 256Mi of Arrow left unused.
    assert arrow + heap + 768 <= mebibytes(memory) < arrow + 256 + min(max((arrow + 256) // 8, 512), 4096) + 768


def test_a_memory_value_that_cannot_hold_the_jvm_is_refused_by_name(helm):
    with pytest.raises(RenderError, match="give at least 1792Mi") as refused:
        render(helm, memory="1Gi")
    assert "memory 1Gi" in str(refused.value)


def test_the_log_format_is_a_value(helm):
    assert one(render(helm), "ConfigMap", "floe-config")["data"]["FLOE_LOG_FORMAT"] == "json"
    assert one(render(helm, config__logFormat="plain"), "ConfigMap", "floe-config")["data"]["FLOE_LOG_FORMAT"] == "plain"


def test_the_default_image_is_the_one_the_build_makes(helm):
    """cluster/pom.xml names the image floe:${project.version}; the chart's default is the same."""
    pom = (ROOT / "cluster" / "pom.xml").read_text()
    assert re.search(r"<floe\.image>floe:\$\{project\.version\}</floe\.image>", pom)
    version = re.search(r"<artifactId>floe-parent</artifactId>\s*<version>([^<]+)</version>", pom).group(1)
    assert container(render(helm))["image"] == f"floe:{version}"


def test_storage_values_reach_the_node_settings(helm):
    docs = render(helm, values=OVERRIDES["storage"])
    config = one(docs, "ConfigMap", "floe-config")["data"]
    assert config["FLOE_ALLOWED_LOCATIONS"] == "s3://lake/warehouse/,s3://scratch/"
    assert config["FLOE_S3_ENDPOINT"] == "http://minio.storage.svc:9000"
    assert config["FLOE_S3_PATH_STYLE_ACCESS"] == "true"
    assert config["AWS_REGION"] == "eu-west-1"
    variables = env(docs)
    assert variables["FLOE_S3_ACCESS_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "floe-s3", "key": "access-key"}
    assert variables["FLOE_S3_SECRET_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "floe-s3", "key": "secret-key"}
    assert settings_file(docs) == {"floe.catalogs": {}, "floe.storage.properties": {"s3.sse.type": "kms", "client.region": "eu-west-1"}}
    # Without them, the node keeps its defaults: no location is allowed, the AWS chain.
    plain = render(helm)
    assert not {"FLOE_ALLOWED_LOCATIONS", "FLOE_S3_ENDPOINT", "AWS_REGION"} & set(one(plain, "ConfigMap", "floe-config")["data"])
    assert "args" not in container(plain) and "FLOE_S3_ACCESS_KEY" not in env(plain)


def settings_file(docs: List[dict]) -> dict:
    """The settings file the node gets with --config, as {path: value} (each line path = JSON)."""
    floe = container(docs)
    (path,) = [floe["args"][i + 1] for i, a in enumerate(floe["args"]) if a == "--config"]
    mount = next(m for m in floe["volumeMounts"] if path.startswith(m["mountPath"] + "/"))
    volume = next(v for v in pod(docs)["volumes"] if v["name"] == mount["name"])
    text = one(docs, "ConfigMap", volume["configMap"]["name"])["data"][path[len(mount["mountPath"]) + 1:]]
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return {k.strip(): json.loads(v) for k, v in (line.split("=", 1) for line in lines)}


def test_catalogs_keep_icebergs_property_names_and_secret_ones_come_from_secrets(helm):
    docs = render(helm, values=OVERRIDES["catalogs"])
    assert settings_file(docs)["floe.catalogs"] == OVERRIDES["catalogs"]["catalogs"]
    variables = env(docs)
    # EnvironmentProperties reads them back: '__' a dot, '_' a hyphen, lower case.
    assert variables["FLOE_CATALOG__LAKE__CREDENTIAL"]["valueFrom"]["secretKeyRef"] == {"name": "lake-catalog", "key": "credential"}
    assert variables["FLOE_CATALOG__PG__JDBC__PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "pg", "key": "password"}
    assert variables["FLOE_STORAGE__GCS__OAUTH2__TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "gcs", "key": "token"}


def test_monitoring_objects_are_optional(helm):
    assert not [d for d in render(helm) if d["kind"] == "ServiceMonitor" or d["metadata"]["name"].endswith("-dashboard")]
    docs = render(helm, values=OVERRIDES["monitoring"])
    monitor = one(docs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    selected = [s for s in docs if s["kind"] == "Service"
                and monitor["spec"]["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()]
    # The headless Service alone: it has the management port the endpoint names.
    assert [s["metadata"]["name"] for s in selected] == ["floe"]
    assert monitor["spec"]["endpoints"][0]["port"] in {p["name"] for p in selected[0]["spec"]["ports"]}
    assert "prometheus.io/scrape" not in one(docs, "StatefulSet")["spec"]["template"]["metadata"]["annotations"]
    dashboard = one(docs, "ConfigMap", "floe-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["floe-dashboard.json"]) == json.loads((ROOT / "k8s" / "grafana" / "floe-dashboard.json").read_text())


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
    assert {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"} == {"prod-floe-ticket", "prod-floe-auth", "prod-floe-tls"}


def render_upgrade(helm: str, tmp_path: Path, installed: List[dict], values: Optional[dict] = None) -> List[dict]:
    """A render as `helm upgrade` makes it: `lookup` answers with the Secrets `installed` holds.
    (The chart is copied with lookup swapped for a value, and without its schema, which would
    refuse that value.)"""
    chart = tmp_path / "upgrade-chart"
    if not chart.exists():
        shutil.copytree(CHART, chart)
        (chart / "values.schema.json").unlink()
        secrets = chart / "templates" / "secrets.yaml"
        lookup = 'lookup "v1" "Secret" .Release.Namespace $secretName'
        text = secrets.read_text()
        assert text.count(lookup) == 3
        secrets.write_text(text.replace(lookup, "(get .Values.installedSecrets $secretName | default dict)"))
    found = {d["metadata"]["name"]: d for d in installed if d["kind"] == "Secret"}
    return template(helm, chart, "floe", "data", {**(values or {}), "installedSecrets": found}, {})


def test_an_upgrade_keeps_the_generated_secrets_and_renews_the_certificate_only_for_new_names(helm, tmp_path):
    installed = render(helm)
    upgraded = render_upgrade(helm, tmp_path, installed, {"replicas": 5})
    data = {d["metadata"]["name"]: d["data"] for d in upgraded if d["kind"] == "Secret"}
    assert data == {d["metadata"]["name"]: d["data"] for d in installed if d["kind"] == "Secret"}
    assert one(upgraded, "StatefulSet")["spec"]["replicas"] == 5
    # A name the certificate lacks: a new certificate (and CA); tokens and ticket secret stay.
    renamed = render_upgrade(helm, tmp_path, installed, {"tls": {"extraDnsNames": ["floe.example.com"]}})
    again = {d["metadata"]["name"]: d["data"] for d in renamed if d["kind"] == "Secret"}
    assert again["floe-tls"]["tls.crt"] != data["floe-tls"]["tls.crt"]
    assert again["floe-tls"]["ca.crt"] != data["floe-tls"]["ca.crt"]
    assert (again["floe-ticket"], again["floe-auth"]) == (data["floe-ticket"], data["floe-auth"])
    # Without lookup (helm template, a first install) every render is new.
    assert one(render(helm), "Secret", "floe-ticket")["data"] != data["floe-ticket"]


# -- NOTES ---------------------------------------------------------------------------------------

FAKE_KUBECTL = """#!{python}
# kubectl for NOTES' commands, answering from one render's objects.
import json, sys
state = json.load(open({state!r}))
args = sys.argv[1:]
if args[:1] != ["-n"] or args[1] != state["namespace"]:
    sys.exit("kubectl: expected -n " + state["namespace"] + ": " + " ".join(args))
rest = args[2:]
if rest[:2] == ["rollout", "status"] and rest[2:] == ["statefulset/" + state["statefulset"]]:
    sys.exit(0)
if rest[:2] == ["get", "secret"] and len(rest) == 5 and rest[3] == "-o" and rest[4].startswith("jsonpath={{.data."):
    key = rest[4][len("jsonpath={{.data."):-1].replace("\\\\.", ".")
    data = state["secrets"].get(rest[2])
    if data is None or key not in data:
        sys.exit("kubectl: no secret " + rest[2] + " with key " + key)
    sys.stdout.write(data[key])
    sys.exit(0)
sys.exit("kubectl: unexpected " + " ".join(args))
"""

FAKE_FLOE = """#!{python}
# The floe command: records what it was asked and with which settings.
import json, os, sys
with open({calls!r}, "a") as out:
    out.write(json.dumps({{"args": sys.argv[1:], "env": {{k: v for k, v in os.environ.items() if k.startswith("FLOE_")}}}}) + "\\n")
"""


def notes_commands(notes: str) -> List[str]:
    return [line.strip() for line in notes.splitlines() if re.match(r"^  (kubectl|export|floe) ", line)]


def run_notes(rendered: Render, workdir: Path) -> List[dict]:
    """Runs NOTES' commands in bash with kubectl and floe standing in; returns floe's calls."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True)
    state = workdir / "state.json"
    state.write_text(json.dumps({
        "namespace": rendered.namespace,
        "statefulset": rendered.one("StatefulSet")["metadata"]["name"],
        "secrets": {d["metadata"]["name"]: d["data"] for d in rendered.docs if d["kind"] == "Secret"},
    }))
    calls = workdir / "calls.jsonl"
    (bin_dir / "kubectl").write_text(FAKE_KUBECTL.format(python=sys.executable, state=str(state)))
    (bin_dir / "floe").write_text(FAKE_FLOE.format(python=sys.executable, calls=str(calls)))
    for name in ("kubectl", "floe"):
        (bin_dir / name).chmod(0o755)
    script = "set -euo pipefail\n" + "\n".join(notes_commands(rendered.notes)) + "\n"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FLOE_")}
    result = subprocess.run(["bash", "-c", script], cwd=workdir, capture_output=True, text=True, timeout=60,
                            env={**environment, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 0, f"NOTES' commands failed:\n{script}\n{result.stderr}"
    return [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def test_notes_commands_run_against_a_default_install(helm, tmp_path):
    rendered = render_full(helm, tmp_path)
    calls = run_notes(rendered, tmp_path / "run")
    assert [c["args"] for c in calls] == [["cluster"]]
    settings = calls[0]["env"]
    flight = rendered.one("Service", "floe-flight")
    assert settings["FLOE_ADDRESS"] == f"grpc+tls://floe-flight.data.svc:{flight['spec']['ports'][0]['port']}"
    assert Path(settings["FLOE_TLS_CA_FILE"]).read_bytes() == rendered.secret("floe-tls")["ca.crt"]
    operator = [line.split()[2] for line in rendered.secret("floe-auth")["tokens"].decode().splitlines()
                if line.startswith("operator ")]
    assert settings["FLOE_TOKEN"] == operator[0]
    # No table source in the defaults: NOTES says what to set instead of a load that would fail.
    assert "floe load" not in rendered.notes
    assert "storage.allowedLocations" in rendered.notes and "catalogs" in rendered.notes
    assert "7424Mi of Arrow data, 928Mi of heap" in rendered.notes


def test_notes_show_loads_from_the_sources_the_values_give(helm, tmp_path):
    rendered = render_full(helm, tmp_path, values={
        "auth": {"enabled": False}, "tls": {"enabled": False},
        "storage": {"allowedLocations": ["s3://lake/warehouse"]}, "catalogs": {"lake": {"type": "rest", "uri": "http://rest:8181"}}})
    calls = run_notes(rendered, tmp_path / "run")
    assert [c["args"] for c in calls] == [["cluster"], ["load", "events", "s3://lake/warehouse/db/events"],
                                          ["load", "lake-events", "lake.db.events"]]
    assert calls[0]["env"] == {"FLOE_ADDRESS": "grpc+tcp://floe-flight.data.svc:47470"}
    assert "every caller without one is an operator" in rendered.notes


# -- Nodes from the rendered objects -------------------------------------------------------------


class RenderedNode:
    """A node process configured as the chart's pod would be: the container's environment (Secret
    and ConfigMap references resolved, mounted Secrets and ConfigMaps written to files under
    `root`, paths moved there), its arguments and JAVA_TOOL_OPTIONS. Only what cannot exist off a
    cluster is replaced, by system properties: pod DNS names and IPs (127.0.0.1, own ports),
    Kubernetes API discovery (seed nodes) and the management port (off)."""

    def __init__(self, classpath: str, rendered: Render, root: Path, seed_port: Optional[int] = None, first: bool = False):
        self.log = root / "node.log"
        root.mkdir(parents=True)
        docs = rendered.docs
        floe = container(docs)
        volumes = {v["name"]: v for v in pod(docs)["volumes"]}
        moved = {}
        for mount in floe["volumeMounts"]:
            target = root / mount["name"]
            target.mkdir()
            moved[mount["mountPath"]] = str(target)
            volume = volumes.get(mount["name"], {})
            if "secret" in volume:
                for key, content in rendered.secret(volume["secret"]["secretName"]).items():
                    (target / key).write_bytes(content)
            elif "configMap" in volume:
                for key, content in rendered.one("ConfigMap", volume["configMap"]["name"])["data"].items():
                    (target / key).write_text(content)

        def local(value: str) -> str:
            for path, target in moved.items():
                if value == path or value.startswith(path + "/"):
                    return target + value[len(path):]
            return value

        config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
        environment = {}
        for source in floe.get("envFrom", []):
            environment.update(config_maps[source["configMapRef"]["name"]])
        fields = {"metadata.name": "floe-0", "metadata.namespace": rendered.namespace, "status.podIP": "127.0.0.1"}
        for variable in floe["env"]:
            ref = variable.get("valueFrom", {})
            if "secretKeyRef" in ref:
                value = rendered.secret(ref["secretKeyRef"]["name"])[ref["secretKeyRef"]["key"]].decode()
            elif "configMapKeyRef" in ref:
                value = config_maps[ref["configMapKeyRef"]["name"]][ref["configMapKeyRef"]["key"]]
            elif "fieldRef" in ref:
                value = fields[ref["fieldRef"]["fieldPath"]]
            else:
                value = variable["value"]
            environment[variable["name"]] = local(value)

        self.port = free_port()
        self.remote_port = seed_port if first else free_port()
        overrides = {
            "floe.flight.port": self.port, "floe.flight.bind-host": "127.0.0.1",
            "floe.flight.advertised-host": "127.0.0.1", "floe.management.enabled": "false",
            "floe.cluster.discovery": "seed-nodes", "pekko.remote.artery.canonical.hostname": "127.0.0.1",
            "pekko.remote.artery.canonical.port": self.remote_port,
        }
        if seed_port is not None:
            overrides["pekko.cluster.seed-nodes.0"] = f"pekko://floe@127.0.0.1:{seed_port}"
        command = [_java(), *(f"-D{k}={v}" for k, v in overrides.items()), "-cp", classpath, "io.floe.node.Main",
                   *(local(a) for a in floe.get("args", []))]
        base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_", "JAVA_"))}
        base["AWS_EC2_METADATA_DISABLED"] = "true"
        self._log_file = open(self.log, "wb")
        self.process = subprocess.Popen(command, cwd=root, stdout=self._log_file, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env={**base, **environment}, preexec_fn=_die_with_parent)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def stop(self) -> None:
        end_process(self.process)
        self._log_file.close()


class NotesClient:
    """A Flight client with the settings NOTES' commands gave floe, reaching a node on 127.0.0.1
    under the host name in FLOE_ADDRESS (which has no DNS entry here)."""

    def __init__(self, settings: Dict[str, str], node: RenderedNode, token: Optional[str] = "from-notes"):
        scheme, host = re.fullmatch(r"(grpc\+tls|grpc\+tcp)://([^:]+):\d+", settings["FLOE_ADDRESS"]).groups()
        options = {}
        if scheme == "grpc+tls":
            options = {"tls_root_certs": Path(settings["FLOE_TLS_CA_FILE"]).read_bytes(), "override_hostname": host}
        self.client = flight.FlightClient(f"{scheme}://127.0.0.1:{node.port}", **options)
        token = settings.get("FLOE_TOKEN") if token == "from-notes" else token
        headers = [(b"authorization", b"Bearer " + token.encode())] if token else []
        self.options = flight.FlightCallOptions(headers=headers, timeout=120)

    def action(self, kind: str, body: Optional[dict] = None):
        payload = json.dumps(body).encode() if body is not None else b""
        (result,) = list(self.client.do_action(flight.Action(kind, payload), options=self.options))
        return json.loads(result.body.to_pybytes())

    def run(self, args: List[str]):
        """What floe does for `cluster` and `load NAME TABLE` (waiting for READY)."""
        if args == ["cluster"]:
            return self.action("cluster")
        command, name, table = args
        assert command == "load"
        return self.action("load", {"name": name, "table": table, "wait": True})


def wait_until_serving(client: NotesClient, node: RenderedNode, members: int) -> None:
    deadline = time.monotonic() + 180
    while True:
        if node.process.poll() is not None:
            pytest.fail(f"The node exited with {node.process.returncode}:\n{node.tail()}")
        try:
            if sum(m["status"] == "Up" for m in client.action("cluster")["members"]) >= members:
                return
        except flight.FlightError:
            pass
        assert time.monotonic() < deadline, f"no cluster of {members} within 180 s:\n{node.tail()}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def warehouse(classpath, tmp_path_factory) -> Path:
    """A directory of Iceberg tables as a Hadoop catalog lays them out: db/events."""
    root = tmp_path_factory.mktemp("warehouse")
    result = subprocess.run(
        [_java(), "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx512m", "-cp", classpath, "io.floe.demo.SampleTable",
         str(root / "db" / "events"), "20000", "2", "7"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_a_default_install_forms_a_cluster_over_its_generated_secrets_and_loads_as_notes_say(
        helm, classpath, warehouse, tmp_path):
    """Two nodes from the rendered objects: Flight over TLS with the generated certificate (a
    PKCS#1 key), nodes joined over Pekko's mutual TLS with it, tickets signed with the generated
    secret, callers let in by the generated tokens; then NOTES' commands, with the settings they
    give, run against them, loads by location and by catalog included."""
    rendered = render_full(helm, tmp_path, values={
        "storage": {"allowedLocations": [f"file:{warehouse}/"]},
        "catalogs": {"lake": {"type": "hadoop", "warehouse": f"file:{warehouse}"}}})
    calls = run_notes(rendered, tmp_path / "notes")
    assert [c["args"][0] for c in calls] == ["cluster", "load", "load"]
    seed = free_port()
    nodes = [RenderedNode(classpath, rendered, tmp_path / "floe-0", seed, first=True)]
    try:
        nodes.append(RenderedNode(classpath, rendered, tmp_path / "floe-1", seed))
        settings = calls[0]["env"]
        client = NotesClient(settings, nodes[0])
        wait_until_serving(client, nodes[0], members=2)
        for call in calls[1:]:
            assert call["env"] == settings
            status = NotesClient(call["env"], nodes[1]).run(call["args"])
            assert status["state"] == "READY" and status["rows"] == 20000, status
        with pytest.raises(flight.FlightUnauthenticatedError):
            NotesClient(settings, nodes[0], token=None).action("list")
        reader = next(line.split()[2] for line in rendered.secret("floe-auth")["tokens"].decode().splitlines()
                      if line.startswith("reader "))
        with pytest.raises(flight.FlightUnauthorizedError):
            NotesClient(settings, nodes[0], token=reader).run(["load", "more", f"file:{warehouse}/db/events"])
        assert {d["name"] for d in NotesClient(settings, nodes[0], token=reader).action("list")} == {"events", "lake-events"}
    finally:
        for node in nodes:
            node.stop()


def test_a_node_with_auth_off_starts_and_lets_callers_in_without_a_token(helm, classpath, tmp_path):
    rendered = render_full(helm, tmp_path, values={"auth": {"enabled": False}, "tls": {"enabled": False},
                                                   "replicas": 1, "config": {"minDataMembers": 1}})
    (call,) = run_notes(rendered, tmp_path / "notes")
    node = RenderedNode(classpath, rendered, tmp_path / "floe-0")
    try:
        client = NotesClient(call["env"], node)
        wait_until_serving(client, node, members=1)
        assert client.action("list") == []
    finally:
        node.stop()


# -- The kustomize base --------------------------------------------------------------------------


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
    """The same objects, except the Secrets: the base leaves them to the operator ("Deploy" in
    docs/kubernetes.md), the chart creates them under the names the base refers to."""
    kustomize = tool("kustomize", "install-kustomize")
    base = subprocess.run([kustomize, "build", str(ROOT / "k8s" / "base")], capture_output=True, text=True,
                          timeout=120, check=True)
    base_docs = [d for d in yaml.safe_load_all(base.stdout) if d]
    expected = {(d["kind"], d["metadata"]["name"]): strip(d) for d in base_docs}
    chart = render(helm, release="floe")
    rendered = {(d["kind"], d["metadata"]["name"]): strip(d) for d in chart if d["kind"] != "Secret"}
    assert rendered.keys() == expected.keys()
    for key, doc in expected.items():
        assert rendered[key] == doc, f"{key} differs between the chart and k8s/base"
    assert {name for name, _ in secret_references(base_docs)} == {d["metadata"]["name"] for d in chart if d["kind"] == "Secret"}
