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

  /** Releases what the source holds; idempotent. */
  @Override
  void close();
}
