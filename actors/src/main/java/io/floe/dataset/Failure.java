package io.floe.dataset;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.serialization.CborSerializable;
import io.floe.util.Excerpt;
import org.slf4j.Logger;

/**
 * A failure as it travels to clients and is kept in a dataset's status: its kind and a message
 * naming what was wrong, no longer than an error description may be. Replicated and persisted
 * ({@code floe.state.dir}): the kind is written by its name, which {@link ErrorKind} keeps.
 */
public record Failure(ErrorKind kind, String message) implements CborSerializable {
  public Failure {
    message = Excerpt.description(message);
  }

  /**
   * The failure {@code error} reports: a {@link FloeException}'s kind and message, chosen where it
   * was thrown; anything else is {@link ErrorKind#INTERNAL}. Only a future's wrapping is looked
   * through.
   */
  public static Failure of(Throwable error) {
    Throwable root = unwrapped(error);
    String message = root.getMessage() == null ? root.getClass().getName() : root.getMessage();
    return new Failure(FloeException.kindOf(root), message);
  }

  /**
   * {@link #of} for a failure of {@code what} (a slice, a plan), logged where it happened: a
   * failure of the node's own (INTERNAL) as an error with its stack trace, since only that says
   * where Floe went wrong; the caller's and the store's at DEBUG (the dataset's FAILED line, or the
   * refresh's, tells the operator).
   */
  public static Failure logged(Logger log, String what, Throwable error) {
    Failure failure = of(error);
    if (failure.kind() == ErrorKind.INTERNAL) {
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
