"""A CPU profile of one load on a fresh node (issue 22): starts ``./floe node`` cutting the slice
sweep's table (node_load.py --slices) into about N slices, attaches async-profiler once the node
serves, loads the table to READY and writes the collapsed stacks.

    python python/benchmarks/profile_load.py [--slices 2000 | --table DIR] --out cpu.txt [--event cpu]
        [--profiler PATH/libasyncProfiler.so]

async-profiler comes from Maven Central (``tools.profiler:async-profiler:4.6``, whose jar carries
``linux-x64/libasyncProfiler.so``); attaching needs the same user as the node.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import readers


def agent(pid: int, library: str, command: str) -> None:
    # jcmd hands the options to the agent as one argument: the inner quotes keep them together.
    subprocess.run(["jcmd", str(pid), "JVMTI.agent_load", library, f'"{command}"'], check=True)


def main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--slices", type=int, default=2000)
    parser.add_argument("--table", type=Path,
                        help="a directory holding a bench-readers table.json, loaded at the default slice size")
    parser.add_argument("--event", default="cpu")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--profiler", default=str(Path.home() / "async-profiler/linux-x64/libasyncProfiler.so"))
    args = parser.parse_args(argv)
    if args.table:
        table = readers.BenchTable.from_json(json.loads((args.table / "table.json").read_text()))
        target = None
    else:
        table = readers.ensure_table(readers.ROOT / "data" / "bench-readers", args.rows,
                                     max(1, args.rows // readers.SWEEP_ROW_GROUPS))
        target = readers.slice_target_for(table, args.slices)
    node = readers.FloeNode(args.out.with_suffix(".node.log"), readers.memory_limit_for(table), target)
    try:
        node.wait_serving()
        agent(node.process.pid, args.profiler, f"start,event={args.event},interval=5ms")
        with readers.floe_client(node.address) as client:
            started = time.monotonic()
            status = client.load(readers.DATASET, table.metadata_location, wait=True)
            print(f"load {time.monotonic() - started:.2f} s, {status['slices_total']} slices", flush=True)
        agent(node.process.pid, args.profiler, f"stop,collapsed,file={args.out.resolve()}")
    finally:
        node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
