package io.floe.util;

/**
 * Argument and state checks for the modules that carry no third-party library (core, protocol,
 * client), with Guava's {@code %s} message templates so that their messages read the same.
 */
public final class Preconditions {
  private Preconditions() {}

  /**
   * @throws IllegalArgumentException with the formatted message unless {@code condition}
   */
  public static void checkArgument(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalArgumentException(format(template, args));
    }
  }

  /**
   * @throws IllegalStateException with the formatted message unless {@code condition}
   */
  public static void checkState(boolean condition, String template, Object... args) {
    if (!condition) {
      throw new IllegalStateException(format(template, args));
    }
  }

  /**
   * @throws NullPointerException with the formatted message when {@code value} is null
   */
  public static <T> T checkNotNull(T value, String template, Object... args) {
    if (value == null) {
      throw new NullPointerException(format(template, args));
    }
    return value;
  }

  /** Guava's formatting: each {@code %s} takes the next argument; the rest are appended. */
  static String format(String template, Object... args) {
    StringBuilder out = new StringBuilder(template.length() + 16 * args.length);
    int start = 0;
    int i = 0;
    while (i < args.length) {
      int at = template.indexOf("%s", start);
      if (at < 0) {
        break;
      }
      out.append(template, start, at).append(args[i++]);
      start = at + 2;
    }
    out.append(template, start, template.length());
    if (i < args.length) {
      out.append(" [").append(args[i++]);
      while (i < args.length) {
        out.append(", ").append(args[i++]);
      }
      out.append(']');
    }
    return out.toString();
  }
}
