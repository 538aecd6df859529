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

  /** Visits the rank's rows of global batch {@code batch}, in order. */
  public void visit(long batch, RowVisitor visitor) {
    long start = shape.rankStart(batch, worldSize, rank);
    int rows = rowsPerBatch();
    for (int i = 0; i < rows; i++) {
      EpochOrder.RowRef ref = order.at(shape.position(start + i));
      visitor.visit(ref.slice(), ref.row());
    }
  }
}
