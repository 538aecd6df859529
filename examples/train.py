"""Train a small model on a Floe dataset with torchrun, checkpointing where the epoch stands.

The TrainJob in k8s/kubeflow/trainjob-example.yaml runs this file in every training process
(`python -m torch.distributed.run train.py`); so does the plain torchrun example in
examples/README.md. It reads:

  FLOE_ADDRESS   a node's Flight address (the runtime sets it)
  FLOE_DATASET   the READY dataset (the runtime sets the TrainJob's name, as the initializer does)
  FLOE_JOB       the training job's id (default: FLOE_DATASET; the runtime sets the TrainJob's name)
  FEATURES       comma-separated numeric feature columns (default: every numeric column but LABEL)
  LABEL          the column to predict (default: the last numeric column)
  EPOCHS, BATCH_ROWS, SEED, CHECKPOINT_DIR, NUM_WORKERS   as their names say

A restart (at any world size) resumes the epoch exactly where the last checkpoint left it: the
checkpoint holds the model and FloeDataLoader's state_dict().
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
import torch.distributed as dist

from floe_client.torch import FloeDataLoader, FloeIterableDataset


def setting(name: str, default: str) -> str:
    return os.environ.get(name) or default


class Features(FloeIterableDataset):
    """Each batch as (features, label) tensors, standardized within the batch (the example's model
    is a plain linear regression; real features want their own scaling)."""

    def __init__(self, *args, features, label, **kwargs):
        super().__init__(*args, columns=[*features, label], **kwargs)
        self.features = features
        self.label = label

    def to_tensors(self, batch):
        columns = super().to_tensors(batch)
        x = torch.nan_to_num(torch.stack([columns[name].to(torch.float64) for name in self.features], dim=1))
        y = torch.nan_to_num(columns[self.label].to(torch.float64))
        x = (x - x.mean(dim=0)) / (x.std(dim=0) + 1e-9)
        y = (y - y.mean()) / (y.std() + 1e-9)
        return x.to(torch.float32), y.to(torch.float32)


def numeric_columns(address: str, dataset: str) -> list:
    from floe_client import FloeClient

    with FloeClient(address) as client:
        schema = client.plan(dataset).schema  # planning a read answers the dataset's schema
    numeric = [f.name for f in schema if f.type.id in _NUMERIC]
    if len(numeric) < 2:
        raise SystemExit(f"train.py: dataset {dataset!r} has fewer than two numeric columns: {schema}")
    return numeric


def _numeric_ids():
    import pyarrow as pa

    kinds = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float16(), pa.float32(), pa.float64()]
    return {kind.id for kind in kinds}


_NUMERIC = _numeric_ids()


def main() -> None:
    address = setting("FLOE_ADDRESS", "grpc+tcp://127.0.0.1:47470")
    dataset = setting("FLOE_DATASET", "events")
    job = setting("FLOE_JOB", dataset)
    epochs = int(setting("EPOCHS", "2"))
    checkpoint_dir = Path(setting("CHECKPOINT_DIR", "checkpoints"))

    dist.init_process_group("gloo" if not torch.cuda.is_available() else "nccl")
    rank, world = dist.get_rank(), dist.get_world_size()

    numeric = numeric_columns(address, dataset)
    label = setting("LABEL", numeric[-1])
    features = [c for c in setting("FEATURES", ",".join(c for c in numeric if c != label)).split(",") if c]

    data = Features(address, dataset, job, int(setting("BATCH_ROWS", "4096")), seed=int(setting("SEED", "0")),
                    features=features, label=label)
    loader = FloeDataLoader(data, num_workers=int(setting("NUM_WORKERS", "2")), persistent_workers=True)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(len(features), 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    checkpoint = checkpoint_dir / "checkpoint.pt"
    start_epoch = 0
    if checkpoint.exists():
        saved = torch.load(checkpoint)
        model.module.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        loader.load_state_dict(saved["loader"])
        start_epoch = saved["loader"]["epoch"]
        if rank == 0:
            print(f"resuming epoch {start_epoch} at batch {saved['loader'].get('batches_consumed', 0)}", flush=True)

    for epoch in range(start_epoch, epochs):
        if epoch != start_epoch:
            data.set_epoch(epoch)
        rows, loss_sum, batches = 0, 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
            rows += len(y)
            loss_sum += float(loss)
            batches += 1
        totals = torch.tensor([rows], dtype=torch.int64)
        dist.all_reduce(totals)  # every rank reads its share of each of the epoch's global batches
        if rank == 0:
            checkpoint_dir.mkdir(parents=True, exist_ok=True)
            data.set_epoch(epoch + 1)  # the checkpoint resumes at the next epoch's first batch
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "loader": loader.state_dict()}, checkpoint)
            data.set_epoch(epoch)
            print(f"epoch {epoch}: {int(totals[0])} rows in {batches} global batches over {world} ranks, "
                  f"mean loss {loss_sum / max(1, batches):.4g}", flush=True)
        dist.barrier()
    loader.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
