package io.floe.store;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One slice's rows in off-heap Arrow memory, as the record batches the gateway sends. It owns a
 * child allocator of the node's root; the memory is freed once the owning entity has {@link
 * #release() released} it, every stream that {@link #acquire() acquired} it has finished, and the
 * transport has written the last buffer it took without copying, so a drop or a hand-off never
 * pulls buffers from under a running stream.
 */
public final class LoadedSlice {
  private final String sliceId;
  private final Schema schema;
  private final List<ArrowRecordBatch> batches;
  private final long[] batchStarts;

  /** The rows of every batch but the last when they are all equal and not 0, else 0. */
  private final int uniformRows;

  private final long rows;
  private final long bytes;
  private final String decoder;
  private final BufferAllocator allocator;
  private final AllocatorReaper reaper;
  private final AtomicInteger references = new AtomicInteger(1);
  private final java.util.concurrent.atomic.AtomicBoolean ownerReleased =
      new java.util.concurrent.atomic.AtomicBoolean();

  public LoadedSlice(
      String sliceId,
      Schema schema,
      List<ArrowRecordBatch> batches,
      BufferAllocator allocator,
      AllocatorReaper reaper,
      String decoder) {
    this.sliceId = sliceId;
    this.decoder = decoder;
    this.schema = schema;
    this.batches = List.copyOf(batches);
    this.allocator = allocator;
    this.reaper = reaper;
    this.batchStarts = new long[batches.size() + 1];
    long total = 0;
    for (int i = 0; i < batches.size(); i++) {
      batchStarts[i] = total;
      total += batches.get(i).getLength();
    }
    batchStarts[batches.size()] = total;
    this.uniformRows = uniformRows(this.batches);
    this.rows = total;
    this.bytes = allocator.getAllocatedMemory();
  }

  public String sliceId() {
    return sliceId;
  }

  /** Which reader decoded it: vectorized, generic or mixed (see {@link SliceLoader}). */
  public String decoder() {
    return decoder;
  }

  public Schema schema() {
    return schema;
  }

  public List<ArrowRecordBatch> batches() {
    return batches;
  }

  /** The slice-relative row where batch {@code i} starts; {@code i == batches().size()} is rows. */
  public long batchStart(int i) {
    return batchStarts[i];
  }

  /** The index of the batch holding slice-relative row {@code row} (0 ≤ row < rows). */
  public int batchOf(long row) {
    if (uniformRows > 0) {
      // Every batch but the last holds uniformRows: a division, once per row a job gathers.
      return (int) Math.min(row / uniformRows, batches.size() - 1);
    }
    int index = java.util.Arrays.binarySearch(batchStarts, row);
    if (index >= 0) {
      // Empty batches share a start; take the last batch that starts at row.
      while (index + 1 < batches.size() && batchStarts[index + 1] == row) {
        index++;
      }
      return index;
    }
    return -index - 2;
  }

  public long rows() {
    return rows;
  }

  private static int uniformRows(List<ArrowRecordBatch> batches) {
    if (batches.isEmpty() || batches.get(0).getLength() == 0) {
      return 0;
    }
    int rows = batches.get(0).getLength();
    for (int i = 1; i < batches.size() - 1; i++) {
      if (batches.get(i).getLength() != rows) {
        return 0;
      }
    }
    // The last may be shorter, not longer: a longer one would hold rows past where division says.
    return batches.get(batches.size() - 1).getLength() <= rows ? rows : 0;
  }

  /**
   * The slice's allocator. Streams build their roots on it, so loading a batch into a stream only
   * adds a reference to the slice's own buffers; rows cut from a batch for a ticket are accounted
   * here too until written.
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /** Off-heap bytes held when loaded, as accounted by the slice's allocator. */
  public long bytes() {
    return bytes;
  }

  /** Answers a lease that keeps the memory alive until closed, or empty once released. */
  public Optional<Lease> acquire() {
    while (true) {
      int current = references.get();
      if (current == 0) {
        return Optional.empty();
      }
      if (references.compareAndSet(current, current + 1)) {
        return Optional.of(new Lease());
      }
    }
  }

  /**
   * Whether the owner has released the slice (its dataset dropped or failed, or it moved away and
   * its linger ended): streams still reading it should end, so that its memory comes back.
   */
  public boolean released() {
    return ownerReleased.get();
  }

  /** The owner's release (idempotent); memory is freed when the last lease closes. */
  public void release() {
    if (ownerReleased.compareAndSet(false, true)) {
      unreference();
    }
  }

  private void unreference() {
    if (references.decrementAndGet() == 0) {
      batches.forEach(ArrowRecordBatch::close);
      reaper.closeWhenDrained(allocator);
    }
  }

  /** A reader's hold on the slice. */
  public final class Lease implements AutoCloseable {
    private boolean closed;

    private Lease() {}

    public LoadedSlice slice() {
      return LoadedSlice.this;
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        unreference();
      }
    }
  }
}
