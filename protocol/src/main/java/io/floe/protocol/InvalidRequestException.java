package io.floe.protocol;

import java.util.function.Supplier;

/**
 * A request that is the caller's mistake: malformed, or naming an invalid value, column or filter.
 * The gateway answers it with {@link ErrorCode#INVALID_REQUEST}; any other {@link
 * IllegalArgumentException} that escapes a node is a failure of the node and is answered INTERNAL.
 */
public final class InvalidRequestException extends IllegalArgumentException {
  public InvalidRequestException(String message) {
    super(message);
  }

  public InvalidRequestException(String message, Throwable cause) {
    super(message, cause);
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
