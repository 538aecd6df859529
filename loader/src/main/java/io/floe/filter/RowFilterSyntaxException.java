package io.floe.filter;

import io.floe.spec.InvalidSpecException;
import io.floe.util.Excerpt;

/**
 * A row filter that does not follow the documented syntax (see {@code docs/filter-syntax.md}).
 *
 * <p>The message names the 1-based character position, what was wrong there and what the parser
 * expected instead, and quotes the filter: whole when it is short, else the part around the
 * position ({@link Excerpt#around}).
 */
public final class RowFilterSyntaxException extends InvalidSpecException {
  private static final long serialVersionUID = 1L;

  private final String filter;
  private final int position;

  RowFilterSyntaxException(String filter, int position, String detail) {
    super(
        String.format(
            "Invalid row filter at position %d: %s in \"%s\"",
            position, detail, Excerpt.around(filter, position - 1)));
    this.filter = filter;
    this.position = position;
  }

  /** The filter text as it was given to the parser. */
  public String filter() {
    return filter;
  }

  /**
   * The 1-based character position of the problem; one past the last character when the filter
   * ended too early.
   */
  public int position() {
    return position;
  }
}
