package io.floe.util;

/**
 * How much of a caller's input a message may carry: every error description and log line that
 * quotes a value a caller sent (a name, a filter, a body, a path, a token of a filter) quotes it
 * through here. A value is quoted whole up to {@link #MAX_CHARS} characters (so a valid name always
 * is), else by its first and last characters and its length; control characters are escaped, so a
 * quoted value cannot start a log line of its own. A whole description is at most {@link
 * #MAX_DESCRIPTION_CHARS}. Messages then name what was wrong without echoing megabytes back: a gRPC
 * client refuses error metadata past a few kilobytes, and logs would grow with every bad request.
 */
public final class Excerpt {
  /** Characters of a value a message quotes at most: the longest dataset name or job id. */
  public static final int MAX_CHARS = 128;

  /**
   * Characters of a location a message quotes at most: a table's location and the files of such a
   * table. Object-store locations run past a name's 128 ({@code abfs://container@account.dfs.
   * core.windows.net/...} with a file's UUID), and a message must name the file whole to be of use.
   */
  public static final int MAX_LOCATION_CHARS = 512;

  /** Characters of an error description at most, whatever it quotes. */
  public static final int MAX_DESCRIPTION_CHARS = 1_024;

  private static final String GAP = "…";

  private Excerpt() {}

  /**
   * The value whole when it has at most {@link #MAX_CHARS} characters, else its first and last
   * {@code MAX_CHARS / 2} around an ellipsis and its length: {@code abc…xyz (100000 characters)}.
   */
  public static String of(Object value) {
    return bounded(String.valueOf(value), MAX_CHARS);
  }

  /**
   * A location (a table's, or a file's of such a table) as {@link #of} quotes a value, within
   * {@link #MAX_LOCATION_CHARS}: whole up to that, else its first and last {@code
   * MAX_LOCATION_CHARS / 2} around an ellipsis and its length.
   */
  public static String location(Object value) {
    return bounded(String.valueOf(value), MAX_LOCATION_CHARS);
  }

  private static String bounded(String text, int max) {
    if (text.length() <= max) {
      return escaped(text);
    }
    int half = max / 2;
    return escaped(text.substring(0, cutBefore(text, half)))
        + GAP
        + escaped(text.substring(cutAfter(text, text.length() - half)))
        + lengthOf(text);
  }

  /**
   * The {@link #MAX_CHARS} characters of {@code text} around {@code index} (0-based), with an
   * ellipsis where text was left out and its length: where a long filter went wrong, not its start.
   */
  public static String around(String text, int index) {
    if (text.length() <= MAX_CHARS) {
      return escaped(text);
    }
    int start = Math.max(0, Math.min(index - MAX_CHARS / 2, text.length() - MAX_CHARS));
    int end = start + MAX_CHARS;
    start = cutAfter(text, start);
    end = cutBefore(text, end);
    return (start > 0 ? GAP : "")
        + escaped(text.substring(start, end))
        + (end < text.length() ? GAP : "")
        + lengthOf(text);
  }

  /**
   * An error description cut to {@link #MAX_DESCRIPTION_CHARS} characters, saying how long it was;
   * the values it quotes should already be excerpts, this only keeps the whole in bounds.
   */
  public static String description(String description) {
    if (description == null || description.length() <= MAX_DESCRIPTION_CHARS) {
      return description;
    }
    String tail = GAP + " (cut from " + description.length() + " characters)";
    return description.substring(0, cutBefore(description, MAX_DESCRIPTION_CHARS - tail.length()))
        + tail;
  }

  private static String lengthOf(String text) {
    return " (" + text.length() + " characters)";
  }

  /** {@code end}, or one less so that a surrogate pair is not split. */
  private static int cutBefore(String text, int end) {
    return end > 0 && end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))
        ? end - 1
        : end;
  }

  /** {@code start}, or one more so that a surrogate pair is not split. */
  private static int cutAfter(String text, int start) {
    return start > 0 && start < text.length() && Character.isLowSurrogate(text.charAt(start))
        ? start + 1
        : start;
  }

  private static String escaped(String text) {
    if (text.chars().noneMatch(Character::isISOControl)) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 8);
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      switch (ch) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (Character.isISOControl(ch)) {
            out.append(String.format("\\u%04X", (int) ch));
          } else {
            out.append(ch);
          }
        }
      }
    }
    return out.toString();
  }
}
