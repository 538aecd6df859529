package io.floe.gateway;

/**
 * The record batches of one DoGet answer, pulled one at a time as the reader's transport takes
 * them. Holds what the answer reads from (the slice's lease) until closed.
 */
public interface BatchSource extends AutoCloseable {
  /** The stream's schema message. */
  FlightFrame schema();

  /** The next batch, encoded (the caller owns it), or null after the last. */
  FlightFrame next();

  /**
   * Whether what the answer reads was given up by its owner since the source opened: a slice this
   * node no longer holds (its dataset was dropped or failed, or it moved away and its linger
   * ended). The stream then ends at once, so the batches it still has queued give their memory
   * back. Asked now and then from a timer, also after {@link #close}; must not block.
   */
  default boolean withdrawn() {
    return false;
  }

  /** Releases what the source holds; idempotent. */
  @Override
  void close();
}
