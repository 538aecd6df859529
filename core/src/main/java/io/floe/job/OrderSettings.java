package io.floe.job;

import io.floe.serialization.CborSerializable;

/**
 * What, with the dataset's layout and the epoch, fixes the order of an epoch's rows.
 *
 * @param runRows the rows a window shuffles as one unit: 1 mixes single rows; more keep runs of
 *     that many neighbouring rows of a block together, which a node gathers as one copy
 */
public record OrderSettings(
    long seed, boolean shuffle, int blockRows, int windowBlocks, int runRows)
    implements CborSerializable {

  public OrderSettings {
    // Settings written before runs existed (a job's record, a message from an older node) read
    // as 0: their orders mixed single rows.
    if (runRows == 0) {
      runRows = 1;
    }
  }

  /** Settings that mix single rows within a window. */
  public OrderSettings(long seed, boolean shuffle, int blockRows, int windowBlocks) {
    this(seed, shuffle, blockRows, windowBlocks, 1);
  }
}
