package io.floe.job;

import io.floe.util.Preconditions;

/**
 * One rank's read of some global batches of one epoch of a job: everything that fixes which rows it
 * gets, in which order, given the layout with fingerprint {@code layout}. The planner makes it, a
 * job ticket carries it, and the node that serves the ticket gathers by it, so that what was
 * planned and what is streamed cannot differ.
 *
 * @param layout the fingerprint of the dataset layout the epoch reads
 * @param epoch the epoch
 * @param order the job's order settings
 * @param batchRows the rows of a global batch
 * @param tail what becomes of the epoch's last, short batch
 * @param worldSize the ranks sharing each global batch
 * @param rank this read's rank
 * @param batchFrom the first global batch listed
 * @param batchTo the end (exclusive) of the batches listed
 * @param batchStep the step between listed batches
 */
public record JobRead(
    String layout,
    long epoch,
    OrderSettings order,
    int batchRows,
    TailPolicy tail,
    int worldSize,
    int rank,
    long batchFrom,
    long batchTo,
    long batchStep) {
  public JobRead {
    Preconditions.checkArgument(
        layout != null && !layout.isBlank(), "Invalid job read: no layout fingerprint");
    Preconditions.checkArgument(
        0 <= batchFrom && batchFrom <= batchTo && batchStep > 0,
        "Invalid job read batches [%s, %s) step %s",
        batchFrom,
        batchTo,
        batchStep);
  }

  /** The global batches listed, in order. */
  public long batchCount() {
    return batchTo <= batchFrom ? 0 : (batchTo - batchFrom + batchStep - 1) / batchStep;
  }

  /** The epoch's batches over a layout of {@code rows} rows. */
  public EpochShape shape(long rows) {
    return new EpochShape(rows, batchRows, tail);
  }

  /**
   * The rank's rows of every batch, in the epoch's {@code order} of a layout of {@code rows} rows.
   *
   * @throws IllegalArgumentException if the world size cannot divide a batch
   */
  public RankShare share(long rows, EpochOrder epochOrder) {
    return new RankShare(shape(rows), epochOrder, worldSize, rank);
  }
}
