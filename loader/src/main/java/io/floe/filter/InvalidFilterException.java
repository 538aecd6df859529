package io.floe.filter;

import io.floe.spec.InvalidSpecException;

/**
 * A row filter that parses but does not fit the table: an unknown column, a literal its column's
 * type cannot hold, or an operation the column's type does not have. The message names the column,
 * its type, the value and the filter.
 */
public final class InvalidFilterException extends InvalidSpecException {
  private static final long serialVersionUID = 1L;

  InvalidFilterException(String message) {
    super(message);
  }
}
