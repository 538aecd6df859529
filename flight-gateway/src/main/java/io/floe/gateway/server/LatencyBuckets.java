package io.floe.gateway.server;

import java.time.Duration;

/**
 * The histogram buckets of every latency Floe publishes: a dozen fixed bounds from a millisecond to
 * ten minutes, enough for quantiles in PromQL. Micrometer's percentile histogram gives some 70
 * buckets per timer and tag set, which made an idle node's exposition a few thousand lines, most of
 * them buckets.
 */
public final class LatencyBuckets {
  private static final Duration[] BOUNDS = {
    Duration.ofMillis(1),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofSeconds(60),
    Duration.ofMinutes(10)
  };

  private LatencyBuckets() {}

  /** The bounds, in increasing order (a new array each time). */
  public static Duration[] bounds() {
    return BOUNDS.clone();
  }
}
