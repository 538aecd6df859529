package io.floe.node;

/**
 * A node's settings that cannot start it: a missing, malformed or contradictory value. The
 * operator's to fix, so {@code floe node} says what is wrong and exits 2 without a stack trace.
 */
public final class InvalidSettingsException extends IllegalArgumentException {
  public InvalidSettingsException(String message, Throwable cause) {
    super(message, cause);
  }
}
