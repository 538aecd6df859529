package io.floe.gateway;

import io.floe.slice.LoadedSlice;
import io.floe.ticket.FloeTicket;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Streams one ticket's rows from a held slice. Whole batches go out without a copy (see {@link
 * PacedStream}); only a batch cut by the ticket's range is sliced (and copied).
 */
final class SliceStreamer {
  private final ReaderPacing pacing;

  SliceStreamer(ReaderPacing pacing) {
    this.pacing = pacing;
  }

  /** Sends the rows; answers the number of batches sent, or -1 if the reader cancelled. */
  long stream(LoadedSlice slice, FloeTicket ticket, ServerStreamListener listener) {
    if (ticket.to() > slice.rows()) {
      throw CallStatus.INVALID_ARGUMENT
          .withDescription(
              String.format(
                  "Ticket rows [%d, %d) exceed slice %s of %d rows",
                  ticket.from(), ticket.to(), slice.sliceId(), slice.rows()))
          .toRuntimeException();
    }
    // On the slice's own allocator, loading a batch only adds references to its buffers.
    try (PacedStream stream =
        new PacedStream(pacing, listener, slice.schema(), slice.allocator())) {
      if (ticket.rows() > 0) {
        int last = slice.batchOf(ticket.to() - 1);
        for (int i = slice.batchOf(ticket.from()); i <= last; i++) {
          long start = slice.batchStart(i);
          long end = slice.batchStart(i + 1);
          if (start == end) {
            continue;
          }
          ArrowRecordBatch batch = slice.batches().get(i);
          boolean sent;
          if (ticket.from() <= start && end <= ticket.to()) {
            sent = stream.send(batch);
          } else {
            try (ArrowRecordBatch part =
                part(batch, slice, ticket.from() - start, ticket.to() - start)) {
              sent = stream.send(part);
            }
          }
          if (!sent) {
            return -1;
          }
        }
      }
      return stream.complete();
    }
  }

  /** Rows {@code [from, to)} of a batch (clamped to it), copied into a batch of their own. */
  private static ArrowRecordBatch part(
      ArrowRecordBatch batch, LoadedSlice slice, long from, long to) {
    int lo = (int) Math.max(0, from);
    int hi = (int) Math.min(batch.getLength(), to);
    try (VectorSchemaRoot whole = VectorSchemaRoot.create(slice.schema(), slice.allocator())) {
      new VectorLoader(whole).load(batch);
      try (VectorSchemaRoot part = whole.slice(lo, hi - lo)) {
        return new VectorUnloader(part).getRecordBatch();
      }
    }
  }
}
