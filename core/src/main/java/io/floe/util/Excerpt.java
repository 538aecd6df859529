package io.floe.util;

/**
 * A caller's value as an error message quotes it: whole when short, else its first characters and
 * its length. Messages name what was wrong without echoing megabytes back (a gRPC client refuses
 * error metadata past a few kilobytes, and logs would grow with every bad request).
 */
public final class Excerpt {
  /** Characters of a value a message quotes at most. */
  public static final int MAX_CHARS = 64;

  private Excerpt() {}

  public static String of(Object value) {
    String text = String.valueOf(value);
    if (text.length() <= MAX_CHARS) {
      return text;
    }
    return text.substring(0, MAX_CHARS) + "… (" + text.length() + " characters)";
  }
}
