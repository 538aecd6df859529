package io.floe.gateway.server;

import io.floe.gateway.FlightFrame;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a node's DoGet streams do, as meters: streams open and waiting for slow readers, rows and
 * bytes sent, and how streams ended. No label names a dataset, slice or ticket: streams are many
 * and short, so those would grow without bound.
 */
public final class StreamMetrics {
  /** How a stream ended. */
  enum Outcome {
    COMPLETED,
    CANCELLED,
    STALLED,
    WITHDRAWN,
    FAILED
  }

  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger waiting = new AtomicInteger();
  private final Counter rows;
  private final Counter bytes;
  private final Map<Outcome, Counter> ended;

  public StreamMetrics(MeterRegistry registry) {
    Gauge.builder("floe.streams.open", open, AtomicInteger::get)
        .description("DoGet streams this node is answering")
        .register(registry);
    Gauge.builder("floe.streams.waiting", waiting, AtomicInteger::get)
        .description("DoGet streams waiting for a slow reader to take what was sent")
        .register(registry);
    rows =
        Counter.builder("floe.served.rows")
            .description("Rows this node sent to readers")
            .register(registry);
    bytes =
        Counter.builder("floe.served.bytes")
            .baseUnit("bytes")
            .description("Bytes of Arrow record batches this node sent to readers")
            .register(registry);
    java.util.EnumMap<Outcome, Counter> byOutcome = new java.util.EnumMap<>(Outcome.class);
    for (Outcome outcome : Outcome.values()) {
      byOutcome.put(
          outcome,
          Counter.builder("floe.streams.ended")
              .tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
              .description(
                  "DoGet streams ended: completed, cancelled by the reader, stalled (the reader"
                      + " took nothing for stall-timeout), withdrawn (its slice was released) or"
                      + " failed")
              .register(registry));
    }
    this.ended = Map.copyOf(byOutcome);
  }

  /** Meters nobody reads, for servers without a registry (tests). */
  static StreamMetrics unregistered() {
    return new StreamMetrics(new SimpleMeterRegistry());
  }

  void opened() {
    open.incrementAndGet();
  }

  void sent(FlightFrame frame) {
    if (frame.rows() > 0) {
      rows.increment(frame.rows());
      bytes.increment(frame.size());
    }
  }

  void waitingStarted() {
    waiting.incrementAndGet();
  }

  void waitingEnded() {
    waiting.decrementAndGet();
  }

  void ended(Outcome outcome) {
    open.decrementAndGet();
    ended.get(outcome).increment();
  }
}
