package io.floe.dataset;

import io.floe.serialization.CborSerializable;
import io.floe.table.FailureKind;

/** A load failure as it travels to clients: its kind and a message naming what was wrong. */
public record Failure(FailureKind kind, String message) implements CborSerializable {
  public static Failure of(Throwable error) {
    Throwable root = error;
    while ((root instanceof java.util.concurrent.CompletionException
            || root instanceof java.util.concurrent.ExecutionException)
        && root.getCause() != null) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? root.getClass().getName() : root.getMessage();
    return new Failure(FailureKind.of(root), message);
  }
}
