"""One rank of a data-parallel job, run as its own process by test_torch.py with RANK and
WORLD_SIZE in its environment: a DataLoader with 2 workers over a FloeIterableDataset with a
custom to_tensors, for 2 epochs. Writes what it saw as JSON to the file named by argv[3]."""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa
import torch
from torch.utils.data import DataLoader

from floe import FloeClient
from floe.torch import FloeIterableDataset


class Reviews(FloeIterableDataset):
    """Features, label and ids, plus something from a string column (which the default
    to_tensors would leave out)."""

    def to_tensors(self, batch: pa.RecordBatch):
        columns = dict(zip(batch.schema.names, batch.columns))
        features = torch.stack(
            [
                torch.from_numpy(columns["user_id"].to_numpy().astype("float32")),
                torch.from_numpy(columns["score"].to_numpy().astype("float32")),
            ],
            dim=1,
        )
        text_words = torch.tensor([len(t.split()) for t in columns["text"].to_pylist()], dtype=torch.int64)
        return {
            "id": torch.from_numpy(columns["id"].to_numpy(zero_copy_only=False).copy()),
            "features": features,
            "label": torch.from_numpy(columns["rating"].to_numpy(zero_copy_only=False).copy()),
            "text_words": text_words,
            "worker": torch.full((batch.num_rows,), torch.utils.data.get_worker_info().id),
        }


def main() -> None:
    address, dataset, out = sys.argv[1:4]
    # The main process talks to Floe before the DataLoader starts its workers, as a training
    # script that loads its dataset first would. Workers are spawned, not forked: gRPC's threads
    # in the parent make a forked child hang now and then (seen here: 1 run in 3).
    with FloeClient(address) as client:
        assert client.status(dataset)["state"] == "READY"
    data = Reviews(address, dataset, columns=["id", "user_id", "rating", "score", "text"])
    loader = DataLoader(data, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    epochs = []
    for epoch in range(2):
        data.set_epoch(epoch)
        ids, per_worker = [], {}
        for item in loader:
            assert set(item) == {"id", "features", "label", "text_words", "worker"}
            rows = item["id"].shape[0]
            assert item["features"].shape == (rows, 2) and item["features"].dtype == torch.float32
            assert item["label"].dtype == torch.float32 and bool((item["text_words"] >= 3).all())
            worker = int(item["worker"][0])
            per_worker[worker] = per_worker.get(worker, 0) + rows
            ids.extend(item["id"].tolist())
        epochs.append({"ids": ids, "per_worker": per_worker, "state": data.state_dict()})
    with open(out, "w") as f:
        json.dump({"rank": int(os.environ["RANK"]), "epochs": epochs}, f)


if __name__ == "__main__":
    main()
