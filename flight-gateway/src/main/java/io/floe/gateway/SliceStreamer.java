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
 * Streams one ticket's rows from a held slice. Whole batches go out without a copy: their buffers
 * are loaded by reference into the stream's root and written to the socket as they are. Only a
 * batch cut by the ticket's range is sliced (and copied). Before each batch it waits until the
 * reader's transport is ready, so a slow reader holds back the stream instead of filling memory.
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
    ReaderPacing.Gate gate = pacing.register(listener);
    long sent = 0;
    // On the slice's own allocator, loading a batch only adds references to its buffers.
    try (VectorSchemaRoot root = VectorSchemaRoot.create(slice.schema(), slice.allocator())) {
      VectorLoader loader = new VectorLoader(root);
      listener.setUseZeroCopy(true);
      listener.start(root);
      if (ticket.rows() > 0) {
        int last = slice.batchOf(ticket.to() - 1);
        for (int i = slice.batchOf(ticket.from()); i <= last; i++) {
          long start = slice.batchStart(i);
          long end = slice.batchStart(i + 1);
          if (start == end) {
            continue;
          }
          ArrowRecordBatch batch = slice.batches().get(i);
          if (ticket.from() <= start && end <= ticket.to()) {
            loader.load(batch);
          } else {
            loadPart(loader, root, batch, slice, ticket.from() - start, ticket.to() - start);
          }
          if (!gate.awaitReady()) {
            return -1;
          }
          listener.putNext();
          sent++;
        }
      }
      listener.completed();
    }
    return sent;
  }

  /** Loads rows {@code [from, to)} of a batch (clamped to it) into the stream's root. */
  private void loadPart(
      VectorLoader loader,
      VectorSchemaRoot root,
      ArrowRecordBatch batch,
      LoadedSlice slice,
      long from,
      long to) {
    int lo = (int) Math.max(0, from);
    int hi = (int) Math.min(batch.getLength(), to);
    try (VectorSchemaRoot whole = VectorSchemaRoot.create(slice.schema(), slice.allocator())) {
      new VectorLoader(whole).load(batch);
      try (VectorSchemaRoot part = whole.slice(lo, hi - lo);
          ArrowRecordBatch partBatch = new VectorUnloader(part).getRecordBatch()) {
        loader.load(partBatch);
      }
    }
  }
}
