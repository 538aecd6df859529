package io.floe.spec;

/**
 * A load the table cannot satisfy as asked: a column, snapshot, catalog or filter the table does
 * not have, or a column type Floe cannot serve. It is the caller's mistake and is answered as an
 * invalid request; any other {@link IllegalArgumentException} that escapes a load comes from Floe
 * or a library under it, is a failure of the node, and is answered INTERNAL. Thrown where the
 * mistake is found, with a message that names the thing that was wrong.
 */
public class InvalidSpecException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidSpecException(String message) {
    super(message);
  }

  public InvalidSpecException(String message, Throwable cause) {
    super(message, cause);
  }
}
