"""One rank of a training job, run as its own process by test_jobs_torch.py with RANK and WORLD_SIZE in
its environment: a FloeDataLoader over a FloeIterableDataset with a custom to_tensors.

argv[1] is a JSON object: ``address``, ``dataset``, ``job`` (the job's settings: ``job``,
``batch_rows``, ``seed``, ``mode``, ...), ``epochs`` (list), ``num_workers``, and optionally
``worker_processes`` (DataLoader worker processes instead of FloeDataLoader's threads),
``state_in`` (a file with a state to resume from), ``stop_after`` (batches of the first epoch to
consume before saving the state and stopping), ``slow_worker`` (a DataLoader worker that takes
0.2 s longer per batch), ``exit_after`` (batches after which the process
dies on the spot, as a crashed rank would: os._exit, its last batch unacknowledged), ``pace``
(seconds of "training" per batch), ``progress`` (a file that holds the number of batches taken so
far, for a test that acts mid-epoch) and ``out`` (the file the result goes to, as JSON). Each
epoch's ``times`` are the wall-clock times its batches arrived."""

from __future__ import annotations

import json
import os
import sys
import time

import pyarrow as pa
import torch

from floe_client import FloeClient
from floe_client.torch import FloeDataLoader, FloeIterableDataset


class Rows(FloeIterableDataset):
    """Ids, features stacked from two columns, and the DataLoader worker that read the batch."""

    slow_worker = None

    def to_tensors(self, batch: pa.RecordBatch):
        columns = dict(zip(batch.schema.names, batch.columns))
        features = torch.stack(
            [
                torch.from_numpy(columns["user_id"].to_numpy().astype("float32")),
                torch.from_numpy(columns["score"].to_numpy().astype("float32")),
            ],
            dim=1,
        )
        info = torch.utils.data.get_worker_info()
        if info is not None and info.id == self.slow_worker:
            time.sleep(0.2)  # a worker slower than the others: leases come back out of turn
        return {
            "id": torch.from_numpy(columns["id"].to_numpy(zero_copy_only=False).copy()),
            "features": features,
            "worker": torch.tensor(info.id if info is not None else -1),
        }


class RecordingLoader(FloeDataLoader):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.answers = []

    def on_ack(self, lease, answer):
        self.answers.append([lease.batch, answer["status"]])


def write(path, result):
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)


def main() -> None:
    config = json.loads(sys.argv[1])
    address = config["address"]
    # The main process talks to Floe before the DataLoader starts its workers, as a training
    # script would. Workers are spawned, not forked: gRPC's threads in the parent make a forked
    # child hang now and then.
    with FloeClient(address) as client:
        assert client.status(config["dataset"])["state"] == "READY"
    data = Rows(address, config["dataset"], **config["job"])
    data.slow_worker = config.get("slow_worker")
    workers = config.get("num_workers", 0)
    processes = bool(config.get("worker_processes", False))
    options = {"multiprocessing_context": "spawn"} if workers and processes else {}
    loader = RecordingLoader(data, num_workers=workers, worker_processes=processes, **options)
    if config.get("state_in"):
        with open(config["state_in"]) as f:
            loader.load_state_dict(json.load(f))
    result = {"rank": int(os.environ["RANK"]), "world_size": int(os.environ["WORLD_SIZE"]), "epochs": []}
    for epoch in config["epochs"]:
        data.set_epoch(epoch)  # a loaded state applies to its own epoch, which goes on
        record = {
            "epoch": epoch, "start": loader.batches_consumed, "batches": [], "leases": [], "workers": [], "times": [],
        }
        result["epochs"].append(record)
        for item in loader:
            assert item["features"].shape == (item["id"].shape[0], 2)
            record["times"].append(time.time())
            record["batches"].append(item["id"].tolist())
            record["workers"].append(int(item["worker"]))
            if loader.current_lease is not None:
                record["leases"].append(loader.current_lease.batch)
            if config.get("progress"):
                write(config["progress"], len(record["batches"]))
            if config.get("pace"):
                time.sleep(config["pace"])
            if config.get("exit_after") == len(record["batches"]):
                result["answers"] = loader.answers
                write(config["out"], result)
                os._exit(0)  # a crash: no ack, no clean-up
            if config.get("stop_after") == len(record["batches"]):
                break
        record["state"] = loader.state_dict()
        if config.get("stop_after") is not None:
            break
    result["answers"] = loader.answers
    loader.close()
    write(config["out"], result)


if __name__ == "__main__":
    main()
