package io.floe.gateway.job;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightFrame;
import io.floe.job.RankShare;
import io.floe.store.LoadedSlice;
import io.floe.ticket.JobTicket;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A job ticket's batches from a held slice: for each listed global batch, the rows of the rank's
 * part that this slice holds, in the epoch's order, as one record batch (empty when the slice holds
 * none of them), so that the reader can line up the k-th batch of every endpoint. The rows are
 * gathered (copied) from the slice. Holds the slice's lease until closed.
 */
final class JobBatches implements BatchSource {
  private final LoadedSlice.Lease lease;
  private final LoadedSlice slice;
  private final int sliceIndex;
  private final int sliceCount;
  private final JobTicket ticket;
  private final RankShare share;
  private final Schema projected;
  private final JobOrders orders;
  private final RowGather gather;
  private long next;
  private boolean closed;

  /** Takes over the lease. */
  JobBatches(
      LoadedSlice.Lease lease,
      int sliceIndex,
      int sliceCount,
      JobTicket ticket,
      RankShare share,
      Schema projected,
      JobOrders orders) {
    this.lease = lease;
    this.slice = lease.slice();
    this.sliceIndex = sliceIndex;
    this.sliceCount = sliceCount;
    this.ticket = ticket;
    this.share = share;
    this.projected = projected;
    this.orders = orders;
    this.gather = new RowGather(slice, projected);
    this.next = ticket.batchFrom();
  }

  @Override
  public FlightFrame schema() {
    return FlightFrame.schema(projected);
  }

  @Override
  public FlightFrame next() {
    if (next >= ticket.batchTo()) {
      return null;
    }
    long k = next;
    next += ticket.batchStep();
    BatchParts parts =
        orders.parts(
            new JobOrders.BatchKey(
                ticket.layout(),
                ticket.order(),
                ticket.epoch(),
                ticket.batchRows(),
                ticket.tail(),
                ticket.worldSize(),
                ticket.rank(),
                k),
            share,
            sliceCount);
    try (VectorSchemaRoot part =
            gather.gather(
                parts.rows(),
                parts.offset(sliceIndex),
                parts.count(sliceIndex),
                slice.allocator());
        ArrowRecordBatch batch = new VectorUnloader(part).getRecordBatch()) {
      return FlightFrame.batch(batch);
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        gather.close();
      } finally {
        lease.close();
      }
    }
  }
}
