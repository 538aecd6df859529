package io.floe.job;

import io.floe.util.Excerpt;
import java.util.Locale;

/** What happens to the last global batch of an epoch when the rows do not fill it. */
public enum TailPolicy {
  /** The partial batch is not served: its rows (the last of the epoch's order) skip the epoch. */
  DROP,
  /** The partial batch is filled up by repeating the epoch's first positions. */
  PAD;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static TailPolicy parse(String value) {
    for (TailPolicy tail : values()) {
      if (tail.wireName().equals(value)) {
        return tail;
      }
    }
    throw new IllegalArgumentException(
        "Invalid tail '" + Excerpt.of(value) + "': expected 'drop' or 'pad'");
  }
}
