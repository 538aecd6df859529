package io.floe.gateway;

import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A DoGet stream that sends record batches by reference: each is loaded into the stream's root
 * (which only adds references to its buffers, on the same allocator) and written as it is. Before
 * each batch it waits until the reader's transport is ready, so a slow reader holds the stream back
 * instead of filling memory. Closing releases the root.
 */
final class PacedStream implements AutoCloseable {
  private final ServerStreamListener listener;
  private final ReaderPacing.Gate gate;
  private final VectorSchemaRoot root;
  private final VectorLoader loader;
  private long sent;

  /** Starts the stream with {@code schema}; batches sent must be of it and on {@code allocator}. */
  PacedStream(
      ReaderPacing pacing,
      ServerStreamListener listener,
      Schema schema,
      BufferAllocator allocator) {
    this.listener = listener;
    this.gate = pacing.register(listener);
    this.root = VectorSchemaRoot.create(schema, allocator);
    this.loader = new VectorLoader(root);
    listener.setUseZeroCopy(true);
    listener.start(root);
  }

  /** Sends one batch; false if the reader cancelled (send nothing more then). */
  boolean send(ArrowRecordBatch batch) {
    loader.load(batch);
    if (!gate.awaitReady()) {
      return false;
    }
    listener.putNext();
    sent++;
    return true;
  }

  /** Ends the stream; answers how many batches were sent. */
  long complete() {
    listener.completed();
    return sent;
  }

  @Override
  public void close() {
    root.close();
  }
}
