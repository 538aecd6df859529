package io.floe.job;

import io.floe.util.Excerpt;
import java.util.Locale;

/** How a job's rows reach its workers. */
public enum JobMode {
  /** Each rank's share of every epoch is fixed by the job's order and the world size. */
  DETERMINISTIC,
  /** Workers lease global batches from the job entity as they go and acknowledge them. */
  DYNAMIC;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static JobMode parse(String value) {
    for (JobMode mode : values()) {
      if (mode.wireName().equals(value)) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        "Invalid mode '" + Excerpt.of(value) + "': expected 'deterministic' or 'dynamic'");
  }
}
