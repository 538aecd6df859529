package io.floe.spec;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;

/**
 * A load the table cannot satisfy as asked: a column, snapshot, catalog or filter the table does
 * not have, or a column type Floe cannot serve: {@link ErrorKind#INVALID_ARGUMENT}, the caller's
 * mistake. Any {@link IllegalArgumentException} that escapes a load comes from Floe or a library
 * under it, is a failure of the node, and is answered INTERNAL. Thrown where the mistake is found,
 * with a message that names the thing that was wrong.
 */
public class InvalidSpecException extends FloeException {
  private static final long serialVersionUID = 1L;

  public InvalidSpecException(String message) {
    super(ErrorKind.INVALID_ARGUMENT, message);
  }

  public InvalidSpecException(String message, Throwable cause) {
    super(ErrorKind.INVALID_ARGUMENT, message, cause);
  }
}
