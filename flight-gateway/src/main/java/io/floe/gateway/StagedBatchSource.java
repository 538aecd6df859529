package io.floe.gateway;

/**
 * A source whose batches are made in two steps: fixing what goes into the next batch, which must
 * happen one batch at a time and in order, then making it, which may run on any thread alongside
 * the making of the batches after it. A job's record batch is located (cheap, in order) and then
 * gathered (most of its cost, independent of the others), so one stream can gather on several cores
 * ({@link ReadAheadBatches}).
 */
public interface StagedBatchSource extends BatchSource {
  /** The making of one batch, fixed by {@link #plan}. */
  @FunctionalInterface
  interface Work {
    /** The batch, encoded (the caller owns it); safe to run beside other works of the source. */
    FlightFrame make();
  }

  /**
   * Fixes the next batch; called one at a time, in order. Answers how to make it, or null after the
   * last. A work not yet made when the source closes is dropped, never made.
   */
  Work plan();

  @Override
  default FlightFrame next() {
    Work work = plan();
    return work == null ? null : work.make();
  }
}
