"""How long ``./floe node`` takes from its process start to serving, step by step (issue 22, item 4).

Starts real nodes as operators do (``./floe node``, management on, one node forming its own
cluster), alternating variants round by round, and for each start measures from the moment the
process is spawned:

- ``list``: a Flight ``list`` action answered over 127.0.0.1 (what issue 22's 3.07 s measured; the
  node's Flight server serves, though its cluster may not be Up yet);
- ``ready``: the management port's ``/ready`` answering 200 (cluster member Up, sharding
  registered with its coordinator, Flight serving: what Kubernetes waits for; taken as "serving");
- ``cpu``: CPU seconds the process had used when ``/ready`` answered (less sensitive than wall time
  to the other work on a shared machine);
- the node's own steps, from its log line "Floe node up: ... serving X s after its process
  started: launcher ..., jvm ..., ..." (``StartupTimeline``), and when its member came Up.

Variants change the environment of ``./floe node``: ``cds`` (the default launcher, with its class
archive), ``no-cds`` (``FLOE_CDS=off``), and any ``--variant NAME=VAR=VALUE[;VAR=VALUE]``, e.g.
``--variant 'c1=JAVA_OPTS=-XX:TieredStopAtLevel=1'``. The first start of each variant is a warm-up
(it may train the class archive) and is reported apart.

With ``--load TABLE`` every start is followed by a load of the table to READY, run with a GC log
(``-Xlog:gc,gc+cpu``): the load's seconds, its GC pauses (count, seconds, % of the load), the GC
threads' share of the node's CPU meanwhile, and the heap's peak before a collection against what
was committed (issue 22, item 5: within ``bin/floe-jvm-options``' heap, GC under 5 %).

``--reads N`` then reads the whole dataset N times (one shard, MB/s of Arrow data).

    ./floe bench-start [--rounds 8] [--only cds,no-cds] [--variant ...] [--load TABLE [--reads N]] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

import pyarrow as pa
import pyarrow.flight as fl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # this tree's client, as the node measured is this tree's
TIMEOUT_S = 180.0
STEP_LINE = re.compile(r"serving ([0-9.]+) s after its process started: (.*)$")
STEP = re.compile(r"([a-z][a-z ]*?) ([0-9.]+) s")
UP_LINE = re.compile(r"Cluster member Up ([0-9.]+) s after its process started")
BUILT_VARIANTS = {"cds": {}, "no-cds": {"FLOE_CDS": "off"}}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User and system CPU of the process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_once(variant: Dict[str, str], log: Path, table: Optional[str] = None, reads: int = 0) -> Dict[str, object]:
    """One ``./floe node`` from spawn to ``/ready`` (then, with ``table``, a load of it to READY);
    answers its figures."""
    port, management = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_", "JAVA_OPTS"))}
    env.update(
        FLOE_FLIGHT_PORT=str(port), FLOE_FLIGHT_BIND_HOST="127.0.0.1", FLOE_FLIGHT_ADVERTISED_HOST="127.0.0.1",
        FLOE_MANAGEMENT_PORT=str(management), FLOE_MANAGEMENT_HOST="127.0.0.1",
        FLOE_REMOTE_HOST="127.0.0.1", FLOE_REMOTE_BIND_HOST="127.0.0.1", FLOE_REMOTE_PORT="0",
        FLOE_AUTH_ANONYMOUS="operator", AWS_EC2_METADATA_DISABLED="true",
    )
    env.update(variant)
    gc_log = log.with_suffix(".gc.log")
    if table is not None:
        # The launcher puts JAVA_OPTS last; G1's pauses with their CPU, stamped with wall time.
        env["JAVA_OPTS"] = f"{env.get('JAVA_OPTS', '')} -Xlog:gc,gc+cpu:file={gc_log}:time".strip()
        env["FLOE_ALLOWED_LOCATIONS"] = "*"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        started = time.monotonic()
        node = subprocess.Popen([str(ROOT / "floe"), "node"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    listed: Optional[float] = None
    ready: Optional[float] = None
    cpu = None
    # Management off (as issue 22's 3.07 s was measured): no /ready; serving is the list answer.
    management_on = env.get("FLOE_MANAGEMENT_ENABLED", "true") != "false"
    try:
        while ready is None or listed is None:
            if node.poll() is not None:
                raise RuntimeError(f"./floe node exited with {node.returncode}: {log}")
            if time.monotonic() - started > TIMEOUT_S:
                raise RuntimeError(f"./floe node did not serve in {TIMEOUT_S:.0f} s: {log}")
            if listed is None and answers_list(port):
                listed = time.monotonic() - started
                if not management_on:
                    ready, cpu = listed, cpu_seconds(node.pid)
            if ready is None and answers_ready(management):
                ready = time.monotonic() - started
                cpu = cpu_seconds(node.pid)
            time.sleep(0.005)
        if table is not None:
            load = load_table(node.pid, port, table, gc_log, reads)
    finally:
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGTERM)
        try:
            node.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
    text = log.read_text(errors="replace")
    figures: Dict[str, object] = {"list": listed, "ready": ready, "cpu": cpu,
                                  "trained": "class-data-sharing archive" in text,
                                  "built": "building Floe" in text}
    if table is not None:
        figures["load"] = load
    for line in text.splitlines():
        if (m := STEP_LINE.search(line)) is not None:
            figures["serving (node)"] = float(m.group(1))
            figures["steps"] = {name: float(seconds) for name, seconds in STEP.findall(m.group(2))}
        elif (m := UP_LINE.search(line)) is not None:
            figures["up (node)"] = float(m.group(1))
    return figures


GC_PAUSE = re.compile(r"^\[([^\]]+)\] GC\((\d+)\) (Pause [^(]*(?:\([^)]*\) )*)(\d+)M->(\d+)M\((\d+)M\) ([0-9.]+)ms")
GC_THREAD = re.compile(r"^(GC Thread#|G1 |VM Periodic|VM Thread)")


def thread_cpu(pid: int) -> Dict[str, float]:
    """CPU seconds of the process's threads, by thread name summed."""
    ticks = os.sysconf("SC_CLK_TCK")
    found: Dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return found


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def read_mb_s(port: int) -> float:
    """One read of the whole dataset as one shard, MB/s (Arrow buffer bytes)."""
    client = fl.connect(f"grpc+tcp://127.0.0.1:{port}")
    try:
        started, size = time.monotonic(), 0
        info = client.get_flight_info(fl.FlightDescriptor.for_command(
            json.dumps({"dataset": "bench", "shard_index": 0, "shard_count": 1})))
        for endpoint in info.endpoints:
            for chunk in client.do_get(endpoint.ticket):
                size += chunk.data.nbytes
        return size / 1e6 / (time.monotonic() - started)
    finally:
        client.close()


def load_table(pid: int, port: int, table: str, gc_log: Path, reads_after: int = 0) -> Dict[str, object]:
    """Loads ``table`` (a table directory with table.json, or a metadata location) and waits for
    READY; answers the load's seconds, rows, and the JVM's heap and GC meanwhile from its GC log
    (pauses in the load's window) and its GC threads' CPU."""
    from floe_client import FloeClient

    location = table
    if Path(table, "table.json").is_file():
        location = json.loads(Path(table, "table.json").read_text())["metadata_location"]
    before_threads, before_cpu = thread_cpu(pid), cpu_seconds(pid)
    started_wall = time.time()
    started = time.monotonic()
    with FloeClient(f"grpc+tcp://127.0.0.1:{port}") as client:
        status = client.load("bench", location, wait=True)
    seconds = time.monotonic() - started
    ended_wall = time.time()
    after_threads, after_cpu = thread_cpu(pid), cpu_seconds(pid)
    reads = [read_mb_s(port) for _ in range(reads_after)]
    if status.get("state") != "READY":
        raise RuntimeError(f"The load ended {status.get('state')}: {status}")
    time.sleep(0.2)  # the GC log is written as it goes; let the last line land
    pauses, peak, committed = [], 0, 0
    for line in gc_log.read_text(errors="replace").splitlines():
        m = GC_PAUSE.match(line)
        if m is None:
            continue
        at = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
        if started_wall <= at <= ended_wall + 0.05:
            pauses.append(float(m.group(7)) / 1000)
            peak, committed = max(peak, int(m.group(4))), max(committed, int(m.group(6)))
    gc_cpu = sum(after_threads.get(n, 0.0) - before_threads.get(n, 0.0) for n in after_threads if GC_THREAD.match(n))
    return {
        "seconds": seconds, "rows": status.get("rows"), "rows_s": (status.get("rows") or 0) / seconds,
        "gc_pauses": len(pauses), "gc_pause_s": sum(pauses), "gc_pause_pct": 100 * sum(pauses) / seconds,
        "heap_peak_mib": peak, "heap_committed_mib": committed, "gc_thread_cpu_s": gc_cpu,
        "process_cpu_s": after_cpu - before_cpu, "rss_after_mib": rss_mib(pid),
        "gc_cpu_pct": 100 * gc_cpu / max(after_cpu - before_cpu, 1e-9),
        **({"first_read_mb_s": reads[0], "best_read_mb_s": max(reads)} if reads else {}),
    }


def answers_list(port: int) -> bool:
    # A fresh channel each time, so that gRPC's reconnect backoff adds nothing.
    client = fl.connect(f"grpc+tcp://127.0.0.1:{port}", generic_options=[("grpc.use_local_subchannel_pool", 1)])
    try:
        list(client.do_action(fl.Action("list", b""), options=fl.FlightCallOptions(timeout=2)))
        return True
    except pa.ArrowException:
        return False
    finally:
        client.close()


def answers_ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def parse_variant(text: str) -> tuple:
    name, _, assignments = text.partition("=")
    env = {}
    for assignment in filter(None, assignments.split(";")):
        key, _, value = assignment.partition("=")
        env[key] = value
    return name, env


def summary(runs: List[Dict[str, object]]) -> Dict[str, Dict[str, float]]:
    """Best and median of every figure and step over the runs."""
    series: Dict[str, List[float]] = {}
    for run in runs:
        for key in ("list", "ready", "cpu", "up (node)", "serving (node)"):
            if isinstance(run.get(key), (int, float)):
                series.setdefault(key, []).append(float(run[key]))
        for key, value in (run.get("load") or {}).items():
            if key.endswith("mb_s"):
                key = key.replace("mb_s", "MB/s")
            if key == "rows_s":
                key, value = "load: M rows/s", value / 1e6
            elif key == "rows" or not isinstance(value, (int, float)):
                continue
            series.setdefault("load: " + key if not key.startswith("load") else key, []).append(float(value))
        for step, seconds in (run.get("steps") or {}).items():
            series.setdefault("step: " + step, []).append(seconds)
    # Best is the lowest figure, except for rates.
    return {k: {"best": max(v) if "/s" in k else min(v), "median": statistics.median(v), "n": len(v)}
            for k, v in series.items()}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--only", default="cds,no-cds", help="built-in variants to run, comma-separated")
    parser.add_argument("--variant", action="append", default=[], help="NAME=VAR=VALUE[;VAR=VALUE]")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-start")
    parser.add_argument("--load", metavar="TABLE", help="after each start, load this table (a directory with "
                        "table.json, as python/benchmarks write, or a metadata location) and report heap and GC")
    parser.add_argument("--reads", type=int, default=0, help="with --load: reads of the whole dataset after it "
                        "(one shard, MB/s of Arrow data): the first and the best")
    args = parser.parse_args(argv)

    variants = {name: BUILT_VARIANTS[name] for name in filter(None, args.only.split(","))}
    variants.update(parse_variant(v) for v in args.variant)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out / stamp
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    print(f"bench-start: {', '.join(variants)}; {args.rounds} rounds; commit {commit}; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)

    results: Dict[str, Dict[str, object]] = {}
    for name, env in variants.items():
        first = start_once(env, out / f"{name}-warmup.log")
        results[name] = {"env": env, "warmup": first, "runs": []}
        note = " (trained the class archive)" if first["trained"] else ""
        note += " (built Floe)" if first["built"] else ""
        print(f"  warm-up {name:<12} ready {first['ready']:.2f} s{note}", flush=True)
    for r in range(args.rounds):
        for name, env in variants.items():
            run = start_once(env, out / f"{name}-{r + 1}.log", args.load, args.reads)
            results[name]["runs"].append(run)
            steps = ", ".join(f"{k} {v:.2f}" for k, v in (run.get("steps") or {}).items())
            print(f"  round {r + 1}/{args.rounds} {name:<10} list {run['list']:.2f} s, ready {run['ready']:.2f} s, "
                  f"cpu {run['cpu']:.2f} s, up {run.get('up (node)', float('nan')):.2f} s | {steps}", flush=True)
            if "load" in run:
                load = run["load"]
                print(f"      load {load['seconds']:.2f} s ({load['rows_s'] / 1e6:.2f} M rows/s); GC pauses "
                      f"{load['gc_pauses']} = {load['gc_pause_s']:.3f} s ({load['gc_pause_pct']:.1f} % of the load); "
                      f"GC threads {load['gc_cpu_pct']:.1f} % of the node's CPU; heap peak {load['heap_peak_mib']} MiB "
                      f"of {load['heap_committed_mib']} MiB committed; RSS {load['rss_after_mib']:.0f} MiB", flush=True)
                if "first_read_mb_s" in load:
                    print(f"      reads: first {load['first_read_mb_s']:.0f} MB/s, best {load['best_read_mb_s']:.0f} MB/s",
                          flush=True)
    load = os.getloadavg()
    print(f"\nload average after the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    names = list(variants)
    tables = {name: summary(results[name]["runs"]) for name in names}
    keys = [k for k in tables[names[0]] if all(k in tables[n] for n in names)]
    keys += [k for n in names for k in tables[n] if k not in keys]
    print(f"{'seconds (best / median)':<28}" + "".join(f"{n:>20}" for n in names))
    for key in keys:
        cells = []
        for n in names:
            f = tables[n].get(key)
            cells.append(f"{f['best']:.3g} / {f['median']:.3g}" if f else "-")
        print(f"{key:<28}" + "".join(f"{c:>20}" for c in cells))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"commit": commit, "rounds": args.rounds, "load_average_after": load, "variants": results,
         "summary": tables}, indent=2, default=str))
    print(f"\nfigures: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
