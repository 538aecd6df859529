package io.floe.dataset;

import io.floe.serialization.CborSerializable;
import io.floe.table.FailureKind;
import io.floe.util.Excerpt;
import org.slf4j.Logger;

/**
 * A load failure as it travels to clients: its kind and a message naming what was wrong, no longer
 * than an error description may be (it is logged and kept in the dataset's status too).
 */
public record Failure(FailureKind kind, String message) implements CborSerializable {
  public Failure {
    message = Excerpt.description(message);
  }

  public static Failure of(Throwable error) {
    Throwable root = unwrapped(error);
    String message = root.getMessage() == null ? root.getClass().getName() : root.getMessage();
    return new Failure(FailureKind.of(root), message);
  }

  /**
   * {@link #of} for a failure of {@code what} (a slice, a plan), logged where it happened: a
   * failure of the node's own (INTERNAL) as an error with its stack trace, since only that says
   * where Floe went wrong; the caller's and the store's at DEBUG (the dataset's FAILED line, or the
   * refresh's, tells the operator).
   */
  public static Failure logged(Logger log, String what, Throwable error) {
    Failure failure = of(error);
    if (failure.kind() == FailureKind.INTERNAL) {
      log.error("{} failed inside the node (INTERNAL)", what, unwrapped(error));
    } else {
      log.debug("{} failed ({}): {}", what, failure.kind(), failure.message());
    }
    return failure;
  }

  private static Throwable unwrapped(Throwable error) {
    Throwable root = error;
    while ((root instanceof java.util.concurrent.CompletionException
            || root instanceof java.util.concurrent.ExecutionException)
        && root.getCause() != null) {
      root = root.getCause();
    }
    return root;
  }
}
