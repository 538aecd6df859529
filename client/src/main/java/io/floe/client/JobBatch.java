package io.floe.client;

import java.util.Optional;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One batch of a training job as a reader hands it out: global batch {@link #index()} of an epoch
 * (this rank's share of it in deterministic mode, the whole batch in dynamic mode).
 *
 * <p>The caller owns {@link #root()}: its memory comes from the client's allocator and stays
 * allocated until {@link #close()}. A dynamic-mode batch also carries the lease to acknowledge once
 * the training step used it.
 */
public final class JobBatch implements AutoCloseable {
  private final String job;
  private final int epoch;
  private final long index;
  private final VectorSchemaRoot root;
  private final String lease;

  JobBatch(String job, int epoch, long index, VectorSchemaRoot root, String lease) {
    this.job = job;
    this.epoch = epoch;
    this.index = index;
    this.root = root;
    this.lease = lease;
  }

  JobBatch withLease(String newLease) {
    return new JobBatch(job, epoch, index, root, newLease);
  }

  public String job() {
    return job;
  }

  public int epoch() {
    return epoch;
  }

  /** The global batch index {@code k} within the epoch. */
  public long index() {
    return index;
  }

  public VectorSchemaRoot root() {
    return root;
  }

  public int rows() {
    return root.getRowCount();
  }

  /** The lease id of a dynamic-mode batch; empty in deterministic mode. */
  public Optional<String> lease() {
    return Optional.ofNullable(lease);
  }

  @Override
  public void close() {
    root.close();
  }

  @Override
  public String toString() {
    return String.format(
        "JobBatch[job=%s, epoch=%d, index=%d, rows=%d%s]",
        job, epoch, index, root.getRowCount(), lease == null ? "" : ", lease=" + lease);
  }
}
