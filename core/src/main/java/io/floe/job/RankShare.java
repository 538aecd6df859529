package io.floe.job;

/**
 * Rank {@code rank} of {@code worldSize}'s rows of an epoch, batch by batch: for global batch
 * {@code k}, the rows at the rank's slots of that batch, in slot order.
 */
public final class RankShare {
  /** Receives one row: the slice's index in the layout and the row within the slice. */
  @FunctionalInterface
  public interface RowVisitor {
    void visit(int slice, long row);
  }

  private final EpochShape shape;
  private final EpochOrder order;
  private final int worldSize;
  private final int rank;

  public RankShare(EpochShape shape, EpochOrder order, int worldSize, int rank) {
    this.shape = shape;
    this.order = order;
    this.worldSize = worldSize;
    this.rank = rank;
    shape.rankRows(worldSize); // fails early, naming the world size, if it cannot divide a batch
  }

  public int rowsPerBatch() {
    return shape.rankRows(worldSize);
  }

  /**
   * Fills {@code slices[i]} and {@code rows[i]} (arrays of at least {@link #rowsPerBatch()}) with
   * the rank's rows of global batch {@code batch}, in order.
   */
  public void locate(long batch, int[] slices, long[] rows) {
    forEachRun(batch, (position, run, done) -> order.locate(position, run, slices, rows, done));
  }

  /**
   * Marks {@code marked[s]} (an array with one entry per slice of the layout) for every slice that
   * holds, or may hold, one of the rank's rows of global batch {@code batch}: {@link
   * EpochOrder#markSlices}, without locating each row.
   */
  public void markSlices(long batch, boolean[] marked) {
    forEachRun(batch, (position, run, done) -> order.markSlices(position, run, marked));
  }

  /**
   * A run of the rank's slots: {@code run} epoch positions from {@code position}, slot {@code done}
   * on.
   */
  @FunctionalInterface
  private interface Run {
    void accept(long position, int run, int done);
  }

  /**
   * The rank's slots of global batch {@code batch} as runs of contiguous epoch positions: slots run
   * contiguously until padding wraps to the epoch's start.
   */
  private void forEachRun(long batch, Run visit) {
    long start = shape.rankStart(batch, worldSize, rank);
    int count = rowsPerBatch();
    int done = 0;
    while (done < count) {
      long position = shape.position(start + done);
      int run = (int) Math.min(count - done, order.rows() - position);
      visit.accept(position, run, done);
      done += run;
    }
  }

  /** Visits the rank's rows of global batch {@code batch}, in order. */
  public void visit(long batch, RowVisitor visitor) {
    int count = rowsPerBatch();
    int[] slices = new int[count];
    long[] rows = new long[count];
    locate(batch, slices, rows);
    for (int i = 0; i < count; i++) {
      visitor.visit(slices[i], rows[i]);
    }
  }
}
