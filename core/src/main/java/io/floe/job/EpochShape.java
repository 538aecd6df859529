package io.floe.job;

import io.floe.util.Preconditions;

/**
 * How an epoch's positions are cut into global batches and dealt to ranks. Global batch {@code k}
 * is positions {@code [k·B, (k+1)·B)}; rank {@code r} of {@code W} gets the {@code r}-th of its
 * {@code W} equal parts. The global batches do not depend on {@code W}, every rank gets the same
 * number of batches of the same size, and a resume at batch {@code c} with any {@code W'} reads
 * each remaining position once.
 */
public record EpochShape(long rows, int batchRows, TailPolicy tail) {
  public EpochShape {
    Preconditions.checkArgument(rows >= 0, "Invalid rows: %s", rows);
    Preconditions.checkArgument(batchRows > 0, "Invalid batch_rows: %s", batchRows);
  }

  /** Full global batches per epoch: the tail is dropped, or padded to one more. */
  public long batches() {
    if (rows == 0) {
      return 0;
    }
    return tail == TailPolicy.DROP ? rows / batchRows : (rows + batchRows - 1) / batchRows;
  }

  /** The epoch position served at slot {@code slot} of the batches: padding repeats the start. */
  public long position(long slot) {
    return slot < rows ? slot : slot % rows;
  }

  /** Rows each rank gets per batch at world size {@code worldSize}. */
  public int rankRows(int worldSize) {
    checkWorld(worldSize, 0);
    return batchRows / worldSize;
  }

  /** The first slot of rank {@code rank}'s part of global batch {@code batch}. */
  public long rankStart(long batch, int worldSize, int rank) {
    checkWorld(worldSize, rank);
    Preconditions.checkArgument(
        0 <= batch && batch < batches(),
        "Invalid batch %s: the epoch has %s batches",
        batch,
        batches());
    return batch * batchRows + (long) rank * (batchRows / worldSize);
  }

  private void checkWorld(int worldSize, int rank) {
    Preconditions.checkArgument(worldSize > 0, "Invalid world_size: %s", worldSize);
    Preconditions.checkArgument(
        batchRows % worldSize == 0,
        "Invalid world_size %s: it must divide the job's batch_rows %s, so that every rank gets"
            + " equal batches",
        worldSize,
        batchRows);
    Preconditions.checkArgument(
        0 <= rank && rank < worldSize,
        "Invalid rank %s: must be in 0..%s for world_size %s",
        rank,
        worldSize - 1,
        worldSize);
  }
}
