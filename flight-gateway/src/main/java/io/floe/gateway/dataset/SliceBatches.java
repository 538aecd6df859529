package io.floe.gateway.dataset;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.FlightFrame;
import io.floe.protocol.ErrorCode;
import io.floe.store.LoadedSlice;
import io.floe.ticket.FloeTicket;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * A plain read ticket's rows of a held slice. Whole batches go out by reference; only a batch cut
 * by the ticket's range is sliced (and copied). Holds the slice's lease until closed.
 */
final class SliceBatches implements BatchSource {
  private final LoadedSlice.Lease lease;
  private final LoadedSlice slice;
  private final FloeTicket ticket;
  private final int last;
  private int next;
  private boolean closed;

  private SliceBatches(LoadedSlice.Lease lease, FloeTicket ticket) {
    this.lease = lease;
    this.slice = lease.slice();
    this.ticket = ticket;
    if (ticket.rows() > 0) {
      this.next = slice.batchOf(ticket.from());
      this.last = slice.batchOf(ticket.to() - 1);
    } else {
      this.next = 0;
      this.last = -1;
    }
  }

  /** The ticket's rows; takes over the lease (closing it if the ticket does not fit the slice). */
  static SliceBatches open(LoadedSlice.Lease lease, FloeTicket ticket) {
    LoadedSlice slice = lease.slice();
    if (ticket.to() > slice.rows()) {
      lease.close();
      // A ticket signed by this cluster for other rows than the slice holds: the node's fault.
      throw FlightErrors.error(
          ErrorCode.INTERNAL,
          String.format(
              "Ticket rows [%d, %d) exceed slice %s of %d rows",
              ticket.from(), ticket.to(), slice.sliceId(), slice.rows()));
    }
    return new SliceBatches(lease, ticket);
  }

  @Override
  public FlightFrame schema() {
    return FlightFrame.schema(slice.schema());
  }

  @Override
  public FlightFrame next() {
    while (next <= last) {
      int i = next++;
      long start = slice.batchStart(i);
      long end = slice.batchStart(i + 1);
      if (start == end) {
        continue;
      }
      ArrowRecordBatch batch = slice.batches().get(i);
      if (ticket.from() <= start && end <= ticket.to()) {
        return FlightFrame.batch(batch);
      }
      try (ArrowRecordBatch part = part(batch, ticket.from() - start, ticket.to() - start)) {
        return FlightFrame.batch(part);
      }
    }
    return null;
  }

  /** Rows {@code [from, to)} of a batch (clamped to it), copied into a batch of their own. */
  private ArrowRecordBatch part(ArrowRecordBatch batch, long from, long to) {
    int lo = (int) Math.max(0, from);
    int hi = (int) Math.min(batch.getLength(), to);
    try (VectorSchemaRoot whole = VectorSchemaRoot.create(slice.schema(), slice.allocator())) {
      new VectorLoader(whole).load(batch);
      try (VectorSchemaRoot part = whole.slice(lo, hi - lo)) {
        return new VectorUnloader(part).getRecordBatch();
      }
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      lease.close();
    }
  }
}
