"""One timed scan of an Iceberg table by PyIceberg, for the loader benchmark (LoadBenchmark's
``shapes:ROWS`` tables: nested columns and position delete files, which pyarrow.dataset alone would
not apply).

Prints one JSON line: wall and process-CPU seconds of ``scan().to_arrow()`` on the table's metadata
file (PyIceberg applies the position deletes), rows and Arrow bytes. ``--threads`` is accepted for
LoadBenchmark's sake; PyIceberg reads files on its own thread pool.
"""

import argparse
import json
import time

from pyiceberg.table import StaticTable


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", choices=["1", "all"], default="all")
    parser.add_argument("metadata")
    args = parser.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    table = StaticTable.from_metadata(args.metadata).scan().to_arrow()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "rows": table.num_rows, "bytes": table.nbytes}))


if __name__ == "__main__":
    main()
