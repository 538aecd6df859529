package io.floe.util;

/** Byte counts as messages give them: as people read them, and exactly. */
public final class Sizes {
  private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB"};

  private Sizes() {}

  /** {@code 1.5 GiB}, {@code 300.0 MiB}, {@code 12.0 KiB}, {@code 512 B}. */
  public static String readable(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format("%.1f %s", value, UNITS[unit]);
  }

  /** Both ways: {@code 300.0 MiB (314,572,800 bytes)}. */
  public static String exactly(long bytes) {
    return String.format("%s (%,d bytes)", readable(bytes), bytes);
  }
}
