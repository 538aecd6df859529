package io.floe.gateway;

import io.floe.job.RankShare;
import io.floe.slice.LoadedSlice;
import io.floe.ticket.JobTicket;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Streams a job ticket: for each listed global batch, the rows of the rank's part that this slice
 * holds, in the epoch's order, as one record batch (empty when the slice holds none of them), so
 * that the reader can line up the k-th batch of every endpoint. The rows are gathered (copied) from
 * the slice and sent through a {@link PacedStream}.
 */
final class JobStreamer {
  private final ReaderPacing pacing;
  private final JobOrders orders;

  JobStreamer(ReaderPacing pacing, JobOrders orders) {
    this.pacing = pacing;
    this.orders = orders;
  }

  /** Sends the batches; answers how many were sent, or -1 if the reader cancelled. */
  long stream(
      LoadedSlice slice,
      int sliceIndex,
      int sliceCount,
      JobTicket ticket,
      RankShare share,
      Schema projected,
      ServerStreamListener listener) {
    java.util.function.LongFunction<JobOrders.BatchKey> key =
        k ->
            new JobOrders.BatchKey(
                ticket.layout(),
                ticket.order(),
                ticket.epoch(),
                ticket.batchRows(),
                ticket.tail(),
                ticket.worldSize(),
                ticket.rank(),
                k);
    try (PacedStream stream = new PacedStream(pacing, listener, projected, slice.allocator());
        RowGather gather = new RowGather(slice, projected)) {
      for (long k = ticket.batchFrom(); k < ticket.batchTo(); k += ticket.batchStep()) {
        BatchParts parts = orders.parts(key.apply(k), share, sliceCount);
        boolean sent;
        try (VectorSchemaRoot part =
                gather.gather(
                    parts.rows(),
                    parts.offset(sliceIndex),
                    parts.count(sliceIndex),
                    slice.allocator());
            ArrowRecordBatch batch = new VectorUnloader(part).getRecordBatch()) {
          sent = stream.send(batch);
        }
        if (!sent) {
          return -1;
        }
      }
      return stream.complete();
    }
  }
}
