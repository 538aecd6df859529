"""A seeded fuzzer of a Floe node's Flight RPCs (issue 12): actions, plan descriptors and tickets,
built by mutating valid requests into malformed, huge and deeply nested JSON, odd numbers, odd
Unicode and hostile paths. Every answer must be a success or an error carrying one of Floe's codes
other than INTERNAL; anything else (no code, INTERNAL, a dropped connection) is a finding.

Used by ``python/tests/test_fuzz.py`` (a few thousand requests in CI) and as a command for longer
runs: ``./floe fuzz --requests 10000 --seed 1`` starts a node of its own on 127.0.0.1 and a
PyIceberg table; ``--address`` and ``--table`` aim it at a running node instead (one that lets
anonymous operators in and may load the table)."""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pyarrow as pa
import pyarrow.flight as fl

from floe_client.errors import code_from_details

ACTIONS = ("load", "status", "drop", "refresh", "list", "cluster", "register_job", "job_status",
           "drop_job", "lease", "ack")
# Actions that change the cluster only on names the fuzzer owns: everything else is read-only or
# refused before it acts. Loads of real tables are left out (they would fill memory with copies).
STRINGS = [
    "", " ", "a", "x" * 129, "x" * 5_000, "../../etc/passwd", "file:///etc/passwd", "/etc/shadow",
    "http://169.254.169.254/latest/meta-data/", "ftp://example.invalid/t", "hdfs://nn/t", "s3://",
    "unknownscheme://x", "\u0000", "\ud7ff\ue000", "名前", "\u202eevil", "lake.db.t", "a.b.c.d.e",
    "%2e%2e/%2e%2e", "null", "true", "-1", "1e309", "\\\\server\\share", "*", "sample",
]
NUMBERS = [0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 1.5, -0.0, 1e308, 10**40]


@dataclass
class Tally:
    requests: int = 0
    ok: int = 0
    codes: collections.Counter = field(default_factory=collections.Counter)
    findings: List[str] = field(default_factory=list)

    def record(self, what: str, error: Optional[BaseException]) -> None:
        self.requests += 1
        if error is None:
            self.ok += 1
            return
        code = code_from_details(getattr(error, "extra_info", None)) if isinstance(error, fl.FlightError) else None
        self.codes[code or type(error).__name__] += 1
        if code is None or code == "INTERNAL":
            if len(self.findings) < 50:
                self.findings.append(f"{what}: {code or 'no Floe code'}: {str(error)[:300]}")


class Fuzzer:
    def __init__(self, seed: int, valid: Dict[str, Any]):
        self.rng = random.Random(seed)
        self.valid = valid  # real names and tickets, so mutations reach past the first check

    def value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if r < 0.3:
            return self.rng.choice(STRINGS)
        if r < 0.5:
            return self.rng.choice(NUMBERS)
        if r < 0.6:
            return self.rng.choice([None, True, False])
        if r < 0.7 and depth < 3:
            return [self.value(depth + 1) for _ in range(self.rng.randrange(4))]
        if r < 0.8 and depth < 3:
            return {self.rng.choice(STRINGS[:6] + ["name", "job"]): self.value(depth + 1) for _ in range(3)}
        return "".join(chr(self.rng.choice([self.rng.randrange(32, 127), self.rng.randrange(0x80, 0x2FFF)]))
                       for _ in range(self.rng.randrange(1, 40)))

    def template(self, action: str) -> Dict[str, Any]:
        v = self.valid
        return {
            "load": {"name": "fuzz-" + str(self.rng.randrange(5)), "table": v["missing_table"],
                     "columns": ["id"], "filter": "id < 10", "batch_rows": 100},
            "status": {"name": v["dataset"]},
            "drop": {"name": "fuzz-" + str(self.rng.randrange(5))},
            "refresh": {"name": "fuzz-" + str(self.rng.randrange(5))},
            "list": {},
            "cluster": {},
            "register_job": {"job": "fuzz-job", "dataset": v["dataset"], "batch_rows": 100, "seed": 1,
                             "mode": "dynamic"},
            "job_status": {"job": v["job"], "epoch": 0},
            "drop_job": {"job": "fuzz-job-" + str(self.rng.randrange(3))},
            "lease": {"job": v["job"], "epoch": 0, "worker": "fuzz"},
            "ack": {"job": v["job"], "epoch": 0, "lease": "0:1:2", "worker": "fuzz"},
            "shard_read": {"kind": "shard_read", "dataset": v["dataset"], "shard_index": 0, "shard_count": 1},
            "job_read": {"kind": "job_read", "job": v["job"], "epoch": 0, "world_size": 1, "rank": 0,
                         "batch_from": 0, "batch_to": 1},
        }[action]

    def mutate(self, body: Dict[str, Any]) -> bytes:
        """One of many ways a request goes wrong, from one wrong field to bytes that are not JSON."""
        body = dict(body)
        r = self.rng.random()
        if r < 0.45 and body:
            key = self.rng.choice(list(body))
            body[key] = self.value()
        elif r < 0.55 and body:
            del body[self.rng.choice(list(body))]
        elif r < 0.62:
            body[self.rng.choice(STRINGS)] = self.value()
        elif r < 0.68:
            # Written as text: Python's own encoder refuses to nest this deep.
            depth = self.rng.choice([10, 300, 600, 2_000])
            opens = "".join(self.rng.choice(['[', '{"a":']) for _ in range(depth))
            nested = opens + "1" + "".join("]" if c == "[" else "}" for c in reversed(opens.replace('{"a":', "{")))
            body["name" if "name" in body else "job"] = "@NESTED@"
            return json.dumps(body).replace('"@NESTED@"', nested).encode()
        elif r < 0.72:
            body["name" if "name" in body else "job"] = "n" * self.rng.choice([200, 70_000, 1_500_000])
        elif r < 0.8:
            raw = json.dumps(body).encode()
            cut = self.rng.randrange(len(raw) + 1)
            return raw[:cut] + bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(8)))
        elif r < 0.84:
            return self.rng.choice([b"", b"null", b"[]", b"\"x\"", b"42", b"\xff\xfe", b"{" * 1000,
                                    b'{"name": NaN}', b'{"name": "a", "name": "b"}'])
        elif r < 0.88:
            return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return json.dumps(body).encode()

    def ticket(self) -> bytes:
        real = self.rng.choice(self.valid["tickets"])
        r = self.rng.random()
        if r < 0.35:
            data = bytearray(real)
            for _ in range(self.rng.randrange(1, 4)):
                data[self.rng.randrange(len(data))] ^= 1 << self.rng.randrange(8)
            return bytes(data)
        if r < 0.5:
            return real[: self.rng.randrange(len(real))]
        if r < 0.6:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(200)))
        try:
            parsed = json.loads(real)
            key = self.rng.choice(list(parsed))
            parsed[key] = self.value()
            return json.dumps(parsed).encode()
        except (ValueError, TypeError):
            return real + b"x"


def options(timeout: float = 30.0) -> fl.FlightCallOptions:
    return fl.FlightCallOptions(timeout=timeout)


def run(address: str, requests: int, seed: int, valid: Dict[str, Any],
        progress: Optional[Callable[[Tally], None]] = None) -> Tally:
    fuzzer = Fuzzer(seed, valid)
    tally = Tally()
    client = fl.connect(address, generic_options=[("grpc.max_receive_message_length", -1),
                                                  ("grpc.max_send_message_length", -1)])
    try:
        for i in range(requests):
            kind = fuzzer.rng.random()
            error: Optional[BaseException] = None
            if kind < 0.6:
                action = fuzzer.rng.choice(ACTIONS + ("no_such_action", ""))
                body = fuzzer.mutate(fuzzer.template(action if action in ACTIONS else "status"))
                what = f"action {action!r} {body[:120]!r}"
                try:
                    for _ in client.do_action(fl.Action(action, body), options=options()):
                        pass
                except (fl.FlightError, pa.ArrowException) as e:
                    error = e
            elif kind < 0.8:
                body = fuzzer.mutate(fuzzer.template(fuzzer.rng.choice(["shard_read", "job_read"])))
                if fuzzer.rng.random() < 0.2:
                    descriptor = fl.FlightDescriptor.for_path(*[fuzzer.rng.choice(STRINGS) or "x"
                                                                 for _ in range(fuzzer.rng.randrange(1, 3))])
                else:
                    descriptor = fl.FlightDescriptor.for_command(body)
                what = f"plan {descriptor!r}"[:300]
                try:
                    client.get_flight_info(descriptor, options=options())
                except (fl.FlightError, pa.ArrowException) as e:
                    error = e
            else:
                ticket = fuzzer.ticket()
                what = f"DoGet {ticket[:120]!r}"
                try:
                    client.do_get(fl.Ticket(ticket), options=options()).read_all()
                except (fl.FlightError, pa.ArrowException) as e:
                    error = e
            tally.record(what, error)
            if progress is not None and (i + 1) % 1000 == 0:
                progress(tally)
    finally:
        client.close()
    return tally


def prepare(address: str, table: str) -> Dict[str, Any]:
    """Loads dataset ``fuzzed`` from ``table``, registers a job on it and plans it: the real
    names and tickets the fuzzer mutates."""
    from floe_client import FloeClient, JobSpec

    with FloeClient(address, timeout=300) as client:
        status = client.load("fuzzed", table, columns=["id"], batch_rows=1000)
        assert status["state"] == "READY", status
        client.register_job_spec(JobSpec("fuzzed-job", "fuzzed", 100, seed=1, mode="dynamic"))
        tickets = [e.ticket.ticket for e in client.plan("fuzzed").endpoints]
    return {"dataset": "fuzzed", "job": "fuzzed-job", "tickets": tickets, "missing_table": table + "-missing",
            "rows": status["rows"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", help="a running node (default: start one on 127.0.0.1)")
    parser.add_argument("--table", help="a table the node may load (default: a PyIceberg table written here)")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        address, table = args.address, args.table
        if address is None or table is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
            from readers import ROOT, FloeNode, ensure_table

            if table is None:
                table = ensure_table(ROOT / "data" / "bench-readers", 200_000).metadata_location
            if address is None:
                node = FloeNode(ROOT / "data" / "fuzz" / "node.log", "1GiB")
                stack.callback(node.stop)
                node.wait_serving()
                address = node.address
                print(f"node {address} (log data/fuzz/node.log)", flush=True)
        fuzz(address, table, args)


def fuzz(address: str, table: str, args) -> None:
    valid = prepare(address, table)
    tally = run(address, args.requests, args.seed, valid,
                progress=lambda t: print(f"  {t.requests:,} requests, {t.ok:,} ok, {len(t.findings)} findings",
                                         flush=True))
    print(json.dumps({"requests": tally.requests, "ok": tally.ok, "codes": dict(tally.codes.most_common()),
                      "findings": tally.findings}, indent=1))
    sys.exit(1 if tally.findings else 0)


if __name__ == "__main__":
    main()
