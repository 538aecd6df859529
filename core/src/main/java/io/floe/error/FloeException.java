package io.floe.error;

import java.util.Objects;

/**
 * A failure whose cause Floe knows, thrown where it is found, with its {@link ErrorKind} and a
 * message naming what was wrong (for people; clients decide from the kind). Whoever answers a
 * request sends the kind's error code and this message; any other exception that reaches them is
 * INTERNAL and is logged with its stack trace.
 */
public class FloeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorKind kind;

  public FloeException(ErrorKind kind, String message) {
    this(kind, message, null);
  }

  public FloeException(ErrorKind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  public ErrorKind kind() {
    return kind;
  }

  /**
   * The kind of {@code error}: its own when it is a {@link FloeException}, else {@link
   * ErrorKind#INTERNAL}. Its causes are not searched: a kind is chosen where the failure is found,
   * never guessed from what a library wrapped.
   */
  public static ErrorKind kindOf(Throwable error) {
    return error instanceof FloeException floe ? floe.kind() : ErrorKind.INTERNAL;
  }
}
