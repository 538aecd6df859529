package io.floe.protocol;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import java.util.function.Supplier;

/**
 * A request that is the caller's mistake: malformed, or naming an invalid value, column or filter.
 * Its kind is {@link ErrorKind#INVALID_ARGUMENT}, sent as {@link ErrorCode#INVALID_REQUEST}; an
 * {@link IllegalArgumentException} that escapes a node is a failure of the node and is answered
 * INTERNAL.
 */
public final class InvalidRequestException extends FloeException {
  public InvalidRequestException(String message) {
    super(ErrorKind.INVALID_ARGUMENT, message);
  }

  public InvalidRequestException(String message, Throwable cause) {
    super(ErrorKind.INVALID_ARGUMENT, message, cause);
  }

  /**
   * Reads a request with {@code reader}: whatever argument it refuses is the caller's mistake (the
   * readers check what they are given with {@link IllegalArgumentException}s).
   */
  public static <T> T reading(Supplier<T> reader) {
    try {
      return reader.get();
    } catch (InvalidRequestException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new InvalidRequestException(e.getMessage(), e);
    }
  }
}
