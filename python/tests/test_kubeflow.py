"""k8s/kubeflow against Kubeflow Trainer's own CRDs (v2.0.0, from the Go module proxy): the
runtime and the example TrainJob validate against the CRDs' schemas with unknown fields refused,
the trainers wait for the dataset-initializer step, and both steps agree on the dataset."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

from floe.cli import table_of_storage_uri  # noqa: E402

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
    return {e["name"]: e.get("value", e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")) for e in c["env"]}


def test_trainers_start_after_the_dataset_is_loaded_and_agree_on_it():
    docs = documents()
    jobs = steps(docs["ClusterTrainingRuntime"])
    assert set(jobs) == {"dataset-initializer", "trainer"}
    assert jobs["trainer"]["dependsOn"] == [{"name": jobs["dataset-initializer"]["name"], "status": "Complete"}]
    initializer = container(jobs["dataset-initializer"], "dataset-initializer")
    trainer = container(jobs["trainer"], "node")
    assert env(initializer)["FLOE_ADDRESS"] == env(trainer)["FLOE_ADDRESS"]
    assert env(initializer)["FLOE_DATASET"] == env(trainer)["FLOE_DATASET"] == JOBSET_NAME
    assert env(trainer)["FLOE_JOB"] == JOBSET_NAME
    # The initializer runs the class the build ships in the node image.
    main = initializer["command"][-1]
    assert (ROOT / "initializer" / "target" / "classes" / (main.replace(".", "/") + ".class")).exists(), main
    # The example's storage URI is one the initializer takes.
    storage = docs["TrainJob"]["spec"]["initializer"]["dataset"]["storageUri"]
    assert table_of_storage_uri(storage) == "lake.analytics.events"
