package io.floe.arrow;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Copies record batches into one contiguous buffer. Vectors grow by doubling and allocators round
 * small requests up to a power of two, so freshly built batches hold up to twice their data;
 * packing a whole slice into one allocation keeps the memory held close to the bytes served.
 */
public final class BatchPacker {
  /** Arrow IPC aligns every body buffer to 8 bytes; the packed layout keeps that. */
  private static final int ALIGNMENT = 8;

  private BatchPacker() {}

  /**
   * Answers packed copies of {@code batches} whose buffers all live in one buffer from {@code
   * target}. The caller still owns (and must close) the input batches.
   */
  public static List<ArrowRecordBatch> pack(
      List<ArrowRecordBatch> batches, BufferAllocator target) {
    long total = 0;
    for (ArrowRecordBatch batch : batches) {
      for (ArrowBuf buffer : batch.getBuffers()) {
        total += aligned(buffer.readableBytes());
      }
    }
    List<ArrowRecordBatch> packed = new ArrayList<>(batches.size());
    if (total == 0) {
      for (ArrowRecordBatch batch : batches) {
        packed.add(new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers()));
      }
      return packed;
    }
    try (ArrowBuf slab = target.buffer(total)) {
      long offset = 0;
      for (ArrowRecordBatch batch : batches) {
        List<ArrowBuf> buffers = new ArrayList<>(batch.getBuffers().size());
        for (ArrowBuf buffer : batch.getBuffers()) {
          long length = buffer.readableBytes();
          slab.setBytes(offset, buffer, buffer.readerIndex(), length);
          ArrowBuf view = slab.slice(offset, length);
          buffers.add(view);
          offset += aligned(length);
        }
        // The new batch retains its views of the slab; the slab itself is released by
        // try-with-resources, so the memory lives exactly as long as the packed batches.
        packed.add(new ArrowRecordBatch(batch.getLength(), batch.getNodes(), buffers));
      }
    }
    return packed;
  }

  private static long aligned(long length) {
    return (length + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  }
}
