"""First load on a fresh node, native decoder on and off, against pyarrow.dataset (issue 22, (a)).

Each round starts ``./floe node`` (as operators run it, JVM flags from bin/floe-jvm-options) once
with ``FLOE_LOAD_NATIVE=true`` and once with ``false``, in an order that alternates, loads the
bench-readers table and takes the load's seconds (the ``load`` call with ``wait``, from request to
READY), the node's start to serving and which decoders the slices used; then pyarrow.dataset
decodes the same files in a fresh process (pyarrow_decode.py, default threads). Prints each run and
the best and median of load rows/s and their ratio to pyarrow's decode rows/s.

    python python/benchmarks/node_load.py [--rows N | --table DIR_WITH_table.json] [--rounds R]
        [--slices N]

With ``--slices N`` (target (d): 2000) the table is the bench-readers slice sweep's (the same rows
in small row groups, so they can be cut fine) and the rounds alternate a node cutting it into
about 8 slices and one cutting it into about N (``FLOE_SLICE_TARGET_SIZE``), and print the ratio
of their load times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import readers

HERE = Path(__file__).resolve().parent


def pyarrow_decode(paths) -> dict:
    out = subprocess.run(
        [sys.executable, str(HERE / "pyarrow_decode.py"), "--threads", "all", *paths],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def node_load(table: readers.BenchTable, log: Path, slice_target=None, warm=False) -> dict:
    """Starts a node (FloeNode copies this process's environment, FLOE_LOAD_NATIVE included),
    loads the table, stops the node. With ``warm`` the node first loads and drops the same table
    under another name, so that the timed load runs on code the JIT has compiled."""
    node = readers.FloeNode(log, readers.memory_limit_for(table), slice_target)
    try:
        serving = node.wait_serving()
        with readers.floe_client(node.address) as client:
            if warm:
                client.load("warm-up", table.metadata_location, wait=True)
                client.drop("warm-up")
            started = readers.now()
            status = client.load(readers.DATASET, table.metadata_location, wait=True)
            seconds = readers.now() - started
            final = client.status(readers.DATASET)
        return dict(serving_s=serving, load_s=seconds, rows=status["rows"], decoders=final.get("decoders"),
                    slices=final.get("slices_total"))
    finally:
        node.stop()


def main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--table", type=Path, help="a directory holding a bench-readers table.json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slices", type=int,
                        help="alternate loads in about 8 slices with loads in about this many")
    parser.add_argument("--warm", action="store_true",
                        help="with --slices: time each node's second load (the first warms its JIT)")
    args = parser.parse_args(argv)
    if args.slices:
        table = readers.ensure_table(readers.ROOT / "data" / "bench-readers", args.rows,
                                     max(1, args.rows // readers.SWEEP_ROW_GROUPS))
    elif args.table:
        table = readers.BenchTable.from_json(json.loads((args.table / "table.json").read_text()))
    else:
        table = readers.ensure_table(readers.ROOT / "data" / "bench-readers", args.rows)
    paths = [f.path for f in table.files]
    logs = Path(tempfile.mkdtemp(prefix="node-load-"))
    if args.slices:
        return slice_sweep(table, args.rounds, args.slices, logs, args.warm)
    runs = {"native": [], "vectorized": [], "pyarrow": []}
    for round_ in range(args.rounds):
        order = [True, False] if round_ % 2 == 0 else [False, True]
        for native in order:
            os.environ["FLOE_LOAD_NATIVE"] = "true" if native else "false"
            facts = node_load(table, logs / f"node-{round_}-{native}.log")
            key = "native" if native else "vectorized"
            runs[key].append(facts)
            print(f"round {round_}: FLOE_LOAD_NATIVE={str(native).lower():5}  serving {facts['serving_s']:.2f} s  "
                  f"load {facts['load_s']:.2f} s  {facts['rows'] / facts['load_s'] / 1e6:.2f} M rows/s  "
                  f"decoders {facts['decoders']}", flush=True)
        os.environ.pop("FLOE_LOAD_NATIVE", None)
        decoded = pyarrow_decode(paths)
        runs["pyarrow"].append(dict(load_s=decoded["seconds"], rows=decoded["rows"]))
        print(f"round {round_}: pyarrow.dataset decode {decoded['seconds']:.2f} s  "
              f"{decoded['rows'] / decoded['seconds'] / 1e6:.2f} M rows/s", flush=True)

    def rates(key):
        return [r["rows"] / r["load_s"] for r in runs[key]]

    reference_best, reference_median = max(rates("pyarrow")), statistics.median(rates("pyarrow"))
    print(f"\n{table.rows:,} rows, {len(paths)} files, {args.rounds} rounds; rows/s best | median, "
          f"ratio to pyarrow.dataset's best (median)")
    for key in runs:
        best, median = max(rates(key)), statistics.median(rates(key))
        print(f"{key:10} {best / 1e6:6.2f} | {median / 1e6:6.2f} M rows/s  "
              f"{best / reference_best:.2f}x ({median / reference_median:.2f}x)")
    return 0


def slice_sweep(table: readers.BenchTable, rounds: int, slices: int, logs: Path, warm=False) -> int:
    """Target (d): the same table loaded by fresh nodes in about 8 slices and in about ``slices``,
    alternated round by round (with ``warm``, each node's second load of it)."""
    targets = {"few": readers.slice_target_for(table, 8), "many": readers.slice_target_for(table, slices)}
    runs = {"few": [], "many": []}
    for round_ in range(rounds):
        order = ["few", "many"] if round_ % 2 == 0 else ["many", "few"]
        for key in order:
            facts = node_load(table, logs / f"node-{round_}-{key}.log", targets[key], warm)
            runs[key].append(facts)
            print(f"round {round_}: {key:7} slices {facts['slices']:5}  serving {facts['serving_s']:.2f} s  "
                  f"load {facts['load_s']:.2f} s  decoders {facts['decoders']}", flush=True)
    best = {k: min(r["load_s"] for r in v) for k, v in runs.items()}
    median = {k: statistics.median(r["load_s"] for r in v) for k, v in runs.items()}
    print(f"\n{table.rows:,} rows, {rounds} rounds{', warm nodes' if warm else ''}; load seconds best | median")
    for key in runs:
        print(f"{key:7} {runs[key][0]['slices']:5} slices  {best[key]:.2f} | {median[key]:.2f} s")
    print(f"many / few: {best['many'] / best['few']:.2f}x best, "
          f"{median['many'] / median['few']:.2f}x median (target (d): <= 1.2x); node logs in {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
