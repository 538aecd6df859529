"""One timed decode of Parquet files by pyarrow.dataset, for the loader benchmark (LoadBenchmark).

Prints one JSON line: wall and process-CPU seconds of ``dataset(paths).to_table()``, rows and
Arrow bytes. ``--threads 1`` decodes on one thread (``use_threads=False``), ``--threads all`` with
pyarrow's default thread pool. Columns default to all; ``--columns a,b`` projects.
"""

import argparse
import json
import time

import pyarrow.dataset as pads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", choices=["1", "all"], default="all")
    parser.add_argument("--columns", default="")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    columns = [c for c in args.columns.split(",") if c] or None
    dataset = pads.dataset(args.paths, format="parquet")
    wall, cpu = time.perf_counter(), time.process_time()
    table = dataset.to_table(columns=columns, use_threads=args.threads == "all")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "rows": table.num_rows, "bytes": table.nbytes}))


if __name__ == "__main__":
    main()
