"""k8s/kubeflow against Kubeflow Trainer's own CRDs (v2.0.0, from the Go module proxy): the
runtime, the example TrainJob and the TrainJob Kubeflow's SDK makes for its data cache validate
against the CRDs' schemas with unknown fields refused, the trainers wait for the
dataset-initializer step, and both steps agree on the dataset. Both steps get the token and CA
from Secret floe-kubeflow, which docs/kubernetes.md makes from the Helm chart's Secrets; with the
chart's defaults (auth and TLS on) the runtime's initializer, run from its own container spec,
loads the SDK's cache:// dataset, and the trainers' settings reach it as readers."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

from floe_client.cli import table_of_storage_uri  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRAINER = "github.com/kubeflow/trainer/v2@v2.0.0"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
JOBSET_NAME = "metadata.labels['jobset.sigs.k8s.io/jobset-name']"


@pytest.fixture(scope="module")
def crds(tmp_path_factory) -> dict:
    """{kind: JSON Schema of its v1alpha1 version}, from the CRD YAML in Trainer's module."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("No go toolchain: it fetches Kubeflow Trainer's CRDs from the Go module proxy")
    result = subprocess.run(
        [go, "mod", "download", "-json", TRAINER], cwd=tmp_path_factory.mktemp("go"), capture_output=True, text=True,
        timeout=300, env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"},
    )
    assert result.returncode == 0, result.stderr
    folder = Path(json.loads(result.stdout)["Dir"]) / "manifests" / "base" / "crds"
    schemas = {}
    for path in folder.glob("trainer.kubeflow.org_*.yaml"):
        crd = yaml.safe_load(path.read_text())
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
        schemas[crd["spec"]["names"]["kind"]] = strict(version["schema"]["openAPIV3Schema"])
    assert {"TrainJob", "ClusterTrainingRuntime"} <= set(schemas)
    return schemas


def strict(schema):
    """The schema with unknown fields refused wherever the CRD lists an object's fields (the API
    server prunes them silently; here a misspelt field must fail)."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def documents() -> dict:
    docs = {}
    for path in sorted((ROOT / "k8s" / "kubeflow").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs[doc["kind"]] = doc
    return docs


def errors(schema: dict, doc: dict) -> list:
    body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in jsonschema.Draft7Validator({**schema, "properties": {
                k: v for k, v in schema["properties"].items() if k not in ("apiVersion", "kind", "metadata")}})
            .iter_errors(body)]


def test_runtime_and_trainjob_validate_against_trainers_crds(crds):
    docs = documents()
    for kind in ("ClusterTrainingRuntime", "TrainJob"):
        assert docs[kind]["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
        assert errors(crds[kind], docs[kind]) == [], kind


def test_a_misspelt_field_is_caught(crds):
    runtime = copy.deepcopy(documents()["ClusterTrainingRuntime"])
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][1]
    node["dependsOnn"] = node.pop("dependsOn")
    assert any("dependsOnn" in e for e in errors(crds["ClusterTrainingRuntime"], runtime))
    job = copy.deepcopy(documents()["TrainJob"])
    job["spec"]["initializer"]["dataset"]["storageURI"] = job["spec"]["initializer"]["dataset"].pop("storageUri")
    assert any("storageURI" in e for e in errors(crds["TrainJob"], job))


def steps(runtime: dict) -> dict:
    return {job["template"]["metadata"]["labels"][ANCESTOR]: job for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def container(job: dict, name: str) -> dict:
    (found,) = [c for c in job["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return found


def env(c: dict) -> dict:
    """name: value, the fieldRef's path, or (Secret, key) of a secretKeyRef."""
    def value(e: dict):
        ref = e.get("valueFrom", {})
        if "secretKeyRef" in ref:
            return ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"]
        return e.get("value", ref.get("fieldRef", {}).get("fieldPath"))
    return {e["name"]: value(e) for e in c["env"]}


def test_trainers_start_after_the_dataset_is_loaded_and_agree_on_it():
    docs = documents()
    jobs = steps(docs["ClusterTrainingRuntime"])
    assert set(jobs) == {"dataset-initializer", "trainer"}
    assert jobs["trainer"]["dependsOn"] == [{"name": jobs["dataset-initializer"]["name"], "status": "Complete"}]
    initializer = container(jobs["dataset-initializer"], "dataset-initializer")
    trainer = container(jobs["trainer"], "node")
    assert env(initializer)["FLOE_ADDRESS"] == env(trainer)["FLOE_ADDRESS"]
    # The initializer names the dataset after TRAIN_JOB_NAME, as Trainer's cache runtime passes it.
    assert "FLOE_DATASET" not in env(initializer)
    assert env(initializer)["TRAIN_JOB_NAME"] == env(trainer)["FLOE_DATASET"] == JOBSET_NAME
    assert env(trainer)["FLOE_JOB"] == JOBSET_NAME
    # The initializer runs the class the build ships in the node image.
    main = initializer["command"][-1]
    assert (ROOT / "initializer" / "target" / "classes" / (main.replace(".", "/") + ".class")).exists(), main
    # The example's storage URI is one the initializer takes.
    storage = docs["TrainJob"]["spec"]["initializer"]["dataset"]["storageUri"]
    assert table_of_storage_uri(storage) == "lake.analytics.events"


# -- Kubeflow's SDK and the chart's Secrets -------------------------------------------------------

# What Kubeflow's SDK (kubeflow/sdk, kubeflow/trainer/backends/kubernetes/utils.py,
# get_dataset_initializer) makes of DataCacheInitializer(storage_uri="cache://analytics/events",
# metadata_loc=..., num_data_nodes=3, iam_role=..., head_mem=...): CLUSTER_SIZE is num_data_nodes
# + 1, METADATA_LOC, then each optional field that is set, upper-cased.
def sdk_trainjob(metadata_loc: str) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "fine-tune"},
        "spec": {
            "runtimeRef": {"name": "torch-distributed-with-floe"},
            "initializer": {"dataset": {"storageUri": "cache://analytics/events", "env": [
                {"name": "CLUSTER_SIZE", "value": "4"}, {"name": "METADATA_LOC", "value": metadata_loc},
                {"name": "HEAD_MEM", "value": "2Gi"},
                {"name": "IAM_ROLE", "value": "arn:aws:iam::123456789012:role/events-reader"}]}},
            "trainer": {"numNodes": 2, "command": ["bash", "-c", "python train.py"]},
        },
    }


def test_the_sdks_cache_trainjob_validates_and_names_floes_runtime(crds):
    job = sdk_trainjob("s3a://lake/warehouse/analytics/events/metadata/00003-x.metadata.json")
    assert errors(crds["TrainJob"], job) == []
    assert job["spec"]["runtimeRef"]["name"] == documents()["ClusterTrainingRuntime"]["metadata"]["name"]


def test_the_docs_install_floes_runtime_under_trainers_cache_runtime_name():
    text = (ROOT / "docs" / "kubernetes.md").read_text()
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "torch-distributed-with-cache" in b]
    command = block.replace("| kubectl apply -f -", "").strip()
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    renamed = yaml.safe_load(result.stdout)
    original = documents()["ClusterTrainingRuntime"]
    assert renamed["metadata"]["name"] == "torch-distributed-with-cache"
    assert {**renamed, "metadata": original["metadata"]} == original


def volume_file(job: dict, c: dict, path: str) -> tuple:
    """(Secret, key) a container reads at ``path`` through a mounted Secret volume."""
    volumes = {v["name"]: v for v in job["template"]["spec"]["template"]["spec"].get("volumes", [])}
    for mount in c.get("volumeMounts", []):
        if path.startswith(mount["mountPath"] + "/"):
            secret = volumes[mount["name"]]["secret"]
            relative = path[len(mount["mountPath"]) + 1:]
            (key,) = [i["key"] for i in secret.get("items", [{"key": relative, "path": relative}])
                      if i["path"] == relative]
            return secret["secretName"], key
    raise AssertionError(f"{path} is on no mounted Secret of {c['name']}")


def test_both_steps_get_a_token_of_their_role_and_the_ca_over_tls():
    jobs = steps(documents()["ClusterTrainingRuntime"])
    initializer = container(jobs["dataset-initializer"], "dataset-initializer")
    trainer = container(jobs["trainer"], "node")
    assert env(initializer)["FLOE_TOKEN"] == ("floe-kubeflow", "operator-token")  # loads
    assert env(trainer)["FLOE_TOKEN"] == ("floe-kubeflow", "reader-token")  # reads only
    for job, c in ((jobs["dataset-initializer"], initializer), (jobs["trainer"], trainer)):
        assert env(c)["FLOE_ADDRESS"].startswith("grpc+tls://"), c["name"]
        assert volume_file(job, c, env(c)["FLOE_TLS_CA_FILE"]) == ("floe-kubeflow", "ca.crt"), c["name"]


# -- Against nodes from the chart's defaults ------------------------------------------------------

from conftest import _java  # noqa: E402

FLOE_NAMESPACE = "floe-example"  # where the runtime's FLOE_ADDRESS points
TRAINJOB_NAMESPACE = "team-a"

KUBECTL = """#!{python}
# kubectl for docs/kubernetes.md's commands: Secrets of one render in the Floe namespace, Secrets
# created in the TrainJob's namespace written to a file.
import base64, json, sys
state = json.load(open({state!r}))
args = sys.argv[1:]
namespace, rest = args[1], args[2:]
if args[0] != "-n":
    sys.exit("kubectl: expected -n NAMESPACE first: " + " ".join(args))
if namespace == state["floe_namespace"] and rest[:2] == ["get", "secret"] and rest[3] == "-o":
    key = rest[4][len("jsonpath={{.data."):-1].replace("\\\\.", ".")
    sys.stdout.write(state["secrets"][rest[2]][key])
    sys.exit(0)
if namespace == state["trainjob_namespace"] and rest[:3] == ["create", "secret", "generic"]:
    data = {{}}
    for arg in rest[4:]:
        kind, _, spec = arg.partition("=")
        key, _, value = spec.partition("=")
        if kind == "--from-literal":
            data[key] = base64.b64encode(value.encode()).decode()
        elif kind == "--from-file":
            data[key] = base64.b64encode(open(value, "rb").read()).decode()
        else:
            sys.exit("kubectl: unexpected " + arg)
    json.dump({{"name": rest[3], "data": data}}, open({created!r}, "w"))
    sys.exit(0)
sys.exit("kubectl: unexpected " + " ".join(args))
"""


def docs_secret_commands() -> str:
    """The shell block of docs/kubernetes.md that makes Secret floe-kubeflow."""
    text = (ROOT / "docs" / "kubernetes.md").read_text()
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "create secret generic floe-kubeflow" in b]
    return block


def make_floe_kubeflow_secret(rendered, workdir: Path) -> dict:
    """Runs the docs' commands with kubectl standing in; the Secret they create, decoded."""
    workdir.mkdir(parents=True)
    state, created = workdir / "state.json", workdir / "created.json"
    state.write_text(json.dumps({
        "floe_namespace": rendered.namespace, "trainjob_namespace": TRAINJOB_NAMESPACE,
        "secrets": {d["metadata"]["name"]: d["data"] for d in rendered.docs if d["kind"] == "Secret"}}))
    (workdir / "kubectl").write_text(KUBECTL.format(python=sys.executable, state=str(state), created=str(created)))
    (workdir / "kubectl").chmod(0o755)
    result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + docs_secret_commands()], cwd=workdir,
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": f"{workdir}:{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    secret = json.loads(created.read_text())
    assert secret["name"] == "floe-kubeflow"
    return {k: base64.b64decode(v) for k, v in secret["data"].items()}


def container_environment(job: dict, c: dict, secrets: dict, root: Path, port: int) -> dict:
    """The container's environment as the kubelet would give it: fieldRefs of a TrainJob
    "fine-tune", secretKeyRefs and mounted Secret files from ``secrets``, moved under ``root``;
    the Service's DNS name (none here) replaced by localhost, which the certificate also names."""
    volumes = {v["name"]: v for v in job["template"]["spec"]["template"]["spec"].get("volumes", [])}
    moved = {}
    for mount in c.get("volumeMounts", []):
        target = root / mount["name"]
        target.mkdir(parents=True)
        secret = volumes[mount["name"]]["secret"]
        for item in secret["items"]:
            (target / item["path"]).write_bytes(secrets[secret["secretName"]][item["key"]])
        moved[mount["mountPath"]] = str(target)
    result = {}
    for variable in c["env"]:
        ref = variable.get("valueFrom", {})
        if "secretKeyRef" in ref:
            value = secrets[ref["secretKeyRef"]["name"]][ref["secretKeyRef"]["key"]].decode()
        elif "fieldRef" in ref:
            value = {JOBSET_NAME: "fine-tune"}[ref["fieldRef"]["fieldPath"]]
        else:
            value = variable["value"]
        for path, target in moved.items():
            if value.startswith(path + "/"):
                value = target + value[len(path):]
        result[variable["name"]] = value
    scheme, host, service_port = re.fullmatch(r"(grpc\+tls)://([^:]+):(\d+)", result["FLOE_ADDRESS"]).groups()
    assert host == f"floe-flight.{FLOE_NAMESPACE}.svc" and service_port == "47470"
    result["FLOE_ADDRESS"] = f"{scheme}://localhost:{port}"
    return result


@pytest.fixture(scope="module")
def warehouse(classpath, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("warehouse")
    result = subprocess.run(
        [_java(), "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx512m", "-cp", classpath, "io.floe.demo.SampleTable",
         str(root / "analytics" / "events"), "20000", "2", "7"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_the_runtime_runs_the_sdks_cache_trainjob_against_a_default_chart_install(
        classpath, warehouse, tmp_path, monkeypatch):
    """A node from the chart's defaults (auth and TLS on, its generated Secrets); Secret
    floe-kubeflow made by the docs' commands from them; the runtime's dataset-initializer
    container, its command and environment as Trainer and the kubelet would give them for the
    SDK's cache:// TrainJob, loads the table; `floe initialize-dataset` does the same with that
    environment; the trainers' environment reaches the dataset as a reader."""
    # test_helm renders the chart and starts nodes from it (and needs what its module needs);
    # imported here so that the CRD tests above do not depend on it.
    from test_helm import NotesClient, RenderedNode, render_full, tool, wait_until_serving

    helm = tool("helm", "install-helm")
    events = warehouse / "analytics" / "events"
    metadata = str(events / "metadata" / f"v{(events / 'metadata' / 'version-hint.text').read_text().strip()}.metadata.json")
    rendered = render_full(helm, tmp_path, namespace=FLOE_NAMESPACE, values={
        "replicas": 1, "config": {"minDataMembers": 1}, "storage": {"allowedLocations": [f"file:{warehouse}/", f"{warehouse}/"]},
        # The Service's name has no DNS entry here: clients connect to localhost, which the
        # certificate names as well (the test's only change to what a pod would see).
        "tls": {"extraDnsNames": ["localhost"]}})
    secrets = {"floe-kubeflow": make_floe_kubeflow_secret(rendered, tmp_path / "docs")}
    auth = rendered.secret("floe-auth")["tokens"].decode().split("\n")
    assert secrets["floe-kubeflow"]["ca.crt"] == rendered.secret("floe-tls")["ca.crt"]
    assert f"operator ops {secrets['floe-kubeflow']['operator-token'].decode()}" in auth
    assert f"reader trainers {secrets['floe-kubeflow']['reader-token'].decode()}" in auth

    runtime = documents()["ClusterTrainingRuntime"]
    jobs = steps(runtime)
    job = sdk_trainjob(metadata)
    node = RenderedNode(classpath, rendered, tmp_path / "floe-0")
    try:
        initializer = container(jobs["dataset-initializer"], "dataset-initializer")
        environment = container_environment(jobs["dataset-initializer"], initializer, secrets, tmp_path / "init", node.port)
        # Trainer adds the TrainJob's storageUri and initializer env to the container.
        environment["STORAGE_URI"] = job["spec"]["initializer"]["dataset"]["storageUri"]
        environment.update({e["name"]: e["value"] for e in job["spec"]["initializer"]["dataset"]["env"]})
        client = NotesClient({"FLOE_ADDRESS": f"grpc+tls://floe-flight.{FLOE_NAMESPACE}.svc:47470",
                              "FLOE_TLS_CA_FILE": str(tmp_path / "init" / "floe-ca" / "ca.crt"),
                              "FLOE_TOKEN": environment["FLOE_TOKEN"]}, node)
        wait_until_serving(client, node, members=1)

        command = [_java() if a == "java" else classpath if a == "@/opt/floe/jib-classpath-file" else a
                   for a in initializer["command"]]
        base = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "JAVA_", "AWS_"))}
        run = subprocess.run(command, env={**base, **environment}, capture_output=True, text=True, timeout=300)
        log = run.stdout + run.stderr
        assert run.returncode == 0, log
        assert "Dataset 'fine-tune' is READY" in log and "IAM_ROLE arn:aws:iam::123456789012:role/events-reader is not assumed" in log
        assert client.action("status", {"name": "fine-tune"})["rows"] == 20000

        # The Python CLI's step, from the same environment, for a second TrainJob.
        from typer.testing import CliRunner
        from floe_client.cli import app
        python_step = CliRunner().invoke(app, ["initialize-dataset"], env={**environment, "TRAIN_JOB_NAME": "fine-tune-py"})
        assert python_step.exit_code == 0, python_step.output
        assert client.action("status", {"name": "fine-tune-py"})["state"] == "READY"

        # The trainers: their token reads, and is refused a load.
        trainer = container(jobs["trainer"], "node")
        trainer_environment = container_environment(jobs["trainer"], trainer, secrets, tmp_path / "trainer", node.port)
        from floe_client import FloeClient
        from floe_client.errors import Unauthorized
        for name in ("FLOE_TOKEN", "FLOE_TLS_CA_FILE"):  # what the client reads by default
            monkeypatch.setenv(name, trainer_environment[name])
        with FloeClient(trainer_environment["FLOE_ADDRESS"]) as reader:
            status = reader.status(trainer_environment["FLOE_DATASET"])
            assert status["state"] == "READY" and status["rows"] == 20000
            with pytest.raises(Unauthorized):
                reader.load("more", metadata)
    finally:
        node.stop()
