"""read_shard's recovery: streams that fail mid-way (injected between the real node and the
reader) are planned again and resumed after the rows already yielded, never yielding a row twice
or skipping one; errors a new plan cannot cure reach the caller; prefetching stays bounded."""

from __future__ import annotations

import json
import threading
import time

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from floe_client import FloeClient, InvalidRequest, Unavailable
from test_client import ids_of

# Failures as pyarrow raises them: the transport's own without a code, a node's with its code in
# extra_info (as a FlightInternalError where pyarrow has no class for the status).
UNAVAILABLE = lambda: fl.FlightUnavailableError("Flight returned unavailable error, with message: Socket closed")  # noqa: E731
SLICE_GONE = lambda: fl.FlightInternalError(  # noqa: E731
    "Flight returned not found error, with message: Slice 'sample/1/0' is not held by this node "
    "(dropped or moved); plan the read again. gRPC client debug context: NOT_FOUND:... "
    "Client context: IOError: Server never sent a data message. Detail: Internal",
    b'{"code":"SLICE_NOT_HELD"}',
)
NOT_READY = lambda: fl.FlightInternalError(  # noqa: E731
    "gRPC returned precondition failed error, with message: Dataset 'sample' is not ready: "
    "DEGRADED, 7 of 8 slices loaded",
    b'{"code":"DATASET_NOT_READY"}',
)
BAD = lambda: fl.FlightInternalError(  # noqa: E731
    "Flight returned invalid argument error, with message: Invalid ticket", b'{"code":"INVALID_REQUEST"}'
)


class FlakyReader:
    def __init__(self, flight, reader, fail_after, error):
        self.flight, self.reader, self.fail_after, self.error = flight, reader, fail_after, error
        self.chunks = 0
        self.open = True
        with flight.lock:
            flight.streams += 1
            flight.max_streams = max(flight.max_streams, flight.streams)

    def _closed(self):
        if self.open:
            self.open = False
            with self.flight.lock:
                self.flight.streams -= 1

    def read_chunk(self):
        if self.error is not None and self.chunks >= self.fail_after:
            self._closed()
            self.reader.cancel()
            raise self.error()
        try:
            chunk = self.reader.read_chunk()
        except BaseException:
            self._closed()
            raise
        self.chunks += 1
        if self.flight.chunk_delay:
            time.sleep(self.flight.chunk_delay)
        return chunk

    def cancel(self):
        self._closed()
        self.reader.cancel()


class FlakyFlight:
    """Wraps a real FlightClient; the n-th do_get of each ticket fails as ``script[n]`` says:
    (chunks to pass before failing, error factory) or None for a clean stream."""

    def __init__(self, real, script, plan_failures=()):
        self.real = real
        self.script = script
        self.plan_failures = list(plan_failures)
        self.attempts = {}
        self.plans = 0
        self.lock = threading.Lock()
        self.streams = 0
        self.max_streams = 0
        self.chunk_delay = 0.0

    def get_flight_info(self, descriptor, options=None):
        with self.lock:
            self.plans += 1
            failure = self.plan_failures.pop(0) if self.plan_failures else None
        if failure is not None:
            raise failure()
        return self.real.get_flight_info(descriptor, options=options)

    def do_get(self, ticket, options=None):
        # Tickets carry a fresh expiry and signature in every plan: count attempts per slice range.
        body = json.loads(ticket.ticket)
        key = (body["slice"], body["from"], body["to"])
        with self.lock:
            n = self.attempts.get(key, 0)
            self.attempts[key] = n + 1
        step = self.script[n] if n < len(self.script) else None
        fail_after, error = step if step is not None else (0, None)
        return FlakyReader(self, self.real.do_get(ticket, options=options), fail_after, error)

    def __getattr__(self, name):
        return getattr(self.real, name)


class FlakyClient(FloeClient):
    def __init__(self, address, script, plan_failures=(), **options):
        super().__init__(address, **options)
        self.flaky = {}
        self.script = script
        self.plan_failures = plan_failures

    def _flight(self, uri=None):
        real = super()._flight(uri)
        key = uri or self.address
        with self._lock:
            if key not in self.flaky:
                self.flaky[key] = FlakyFlight(real, self.script, self.plan_failures)
            return self.flaky[key]


def test_failed_streams_resume_after_the_rows_already_yielded(address, sample, client):
    clean = ids_of(client.read_shard(sample, 1, 3))
    script = [(1, UNAVAILABLE), (0, SLICE_GONE), (2, NOT_READY)]
    with FlakyClient(address, script, plan_failures=[NOT_READY, UNAVAILABLE], patience=30) as flaky:
        resumed = ids_of(flaky.read_shard(sample, 1, 3))
        flight = flaky.flaky[flaky.address]
        endpoints = len(client.plan(sample, 1, 3).endpoints)
        # Endpoints of more than three batches failed three times and were read a fourth time;
        # shorter ones were done before the failure meant for them.
        attempts = list(flight.attempts.values())
        assert len(attempts) == endpoints
        assert max(attempts) == 4
        assert flight.plans >= 3 + sum(a - 1 for a in attempts)
    assert resumed == clean  # same rows, same order, none twice, none skipped


def test_an_error_a_new_plan_cannot_cure_reaches_the_caller(address, sample, client):
    clean = ids_of(client.read_shard(sample, 0, 1))
    with FlakyClient(address, [(1, BAD)], patience=30) as flaky:
        got = []
        with pytest.raises(InvalidRequest, match="Invalid ticket"):
            for batch in flaky.read_shard(sample, 0, 1):
                got.extend(batch.column(0).to_pylist())
    # What came before the failure was yielded in order, once.
    assert got == clean[: len(got)]
    assert len(got) > 0


def test_patience_bounds_the_retries(address, sample):
    with FlakyClient(address, [(0, UNAVAILABLE)] * 1000, patience=1.5) as flaky:
        start = time.monotonic()
        with pytest.raises(Unavailable, match="Socket closed"):
            list(flaky.read_shard(sample, 0, 1))
        assert time.monotonic() - start < 10


def test_prefetch_is_bounded(address, sample, client):
    clean = ids_of(client.read_shard(sample, 0, 1))
    with FlakyClient(address, [], prefetch=3, queue_batches=2) as flaky:
        got = []
        for batch in flaky.read_shard(sample, 0, 1):
            got.extend(batch.column(0).to_pylist())
            time.sleep(0.002)  # a consumer slower than the streams
        flight = flaky.flaky[flaky.address]
        assert 2 <= flight.max_streams <= 3
    assert got == clean
