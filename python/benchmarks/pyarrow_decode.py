"""One timed decode of Parquet files by pyarrow.dataset, for the loader benchmark (LoadBenchmark).

Prints one JSON line: wall and process-CPU seconds of ``dataset(paths).to_table()``, rows and
Arrow bytes. ``--threads 1`` decodes on one thread (``use_threads=False``), ``--threads all`` with
pyarrow's default thread pool. Columns default to all; ``--columns a,b`` projects. With
``--s3-endpoint http://127.0.0.1:PORT`` the paths are ``bucket/key`` objects read through
``pyarrow.fs.S3FileSystem`` from that server (``--s3-access-key``, ``--s3-secret-key``,
``--s3-region``), with pyarrow's default read options (its pre-buffering of column chunks).
"""

import argparse
import json
import time

import pyarrow.dataset as pads
import pyarrow.fs as pafs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", choices=["1", "all"], default="all")
    parser.add_argument("--columns", default="")
    parser.add_argument("--s3-endpoint", default="")
    parser.add_argument("--s3-access-key", default="")
    parser.add_argument("--s3-secret-key", default="")
    parser.add_argument("--s3-region", default="us-east-1")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    columns = [c for c in args.columns.split(",") if c] or None
    filesystem = None
    if args.s3_endpoint:
        scheme, _, host = args.s3_endpoint.partition("://")
        filesystem = pafs.S3FileSystem(
            endpoint_override=host,
            scheme=scheme,
            access_key=args.s3_access_key,
            secret_key=args.s3_secret_key,
            region=args.s3_region,
        )
    dataset = pads.dataset(args.paths, format="parquet", filesystem=filesystem)
    wall, cpu = time.perf_counter(), time.process_time()
    table = dataset.to_table(columns=columns, use_threads=args.threads == "all")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "rows": table.num_rows, "bytes": table.nbytes}))


if __name__ == "__main__":
    main()
