package io.floe.gateway.job;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightFrame;
import io.floe.job.JobRead;
import io.floe.job.RankShare;
import io.floe.store.LoadedSlice;
import io.floe.ticket.JobBatchMetadata;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A job read's batches on the node the plan placed them on: for each listed global batch, the rows
 * of the rank's share that sit in this node's slices, gathered from all of them into one record
 * batch in the epoch's order, with the batch index and the rows' places in the share as its
 * metadata ({@link JobBatchMetadata}). A batch none of whose rows are here is not sent. Holds a
 * lease on each of those slices until closed.
 */
final class NodeJobBatches implements BatchSource {
  private final List<LoadedSlice.Lease> leases;
  private final int[] localOf;
  private final JobRead read;
  private final RankShare share;
  private final Schema projected;
  private final RowGather gather;
  private final int[] located;
  private final long[] locatedRows;
  private final int[] source;
  private final int[] indexIn;
  private long next;
  private boolean closed;

  /**
   * Takes over {@code leases}: one for each slice of the layout this node serves, in layout order;
   * {@code localOf[s]} is slice {@code s}'s position among them, or -1 for a slice served
   * elsewhere.
   */
  NodeJobBatches(
      List<LoadedSlice.Lease> leases,
      int[] localOf,
      JobRead read,
      RankShare share,
      Schema projected) {
    this.leases = List.copyOf(leases);
    this.localOf = localOf;
    this.read = read;
    this.share = share;
    this.projected = projected;
    List<LoadedSlice> slices = new ArrayList<>(leases.size());
    leases.forEach(lease -> slices.add(lease.slice()));
    this.gather = new RowGather(slices, projected);
    this.located = new int[share.rowsPerBatch()];
    this.locatedRows = new long[share.rowsPerBatch()];
    this.source = new int[share.rowsPerBatch()];
    this.indexIn = new int[share.rowsPerBatch()];
    this.next = read.batchFrom();
  }

  @Override
  public FlightFrame schema() {
    return FlightFrame.schema(projected);
  }

  @Override
  public FlightFrame next() {
    while (next < read.batchTo()) {
      long k = next;
      next += read.batchStep();
      FlightFrame frame = batch(k);
      if (frame != null) {
        return frame;
      }
    }
    return null;
  }

  /** This node's part of batch {@code k}, encoded, or null when it holds none of its rows. */
  private FlightFrame batch(long k) {
    Part part = part(k);
    if (part == null) {
      return null;
    }
    try (VectorSchemaRoot rows = part.rows();
        ArrowRecordBatch batch = new VectorUnloader(rows).getRecordBatch()) {
      return FlightFrame.batch(batch, new JobBatchMetadata(k, part.places()).encode());
    }
  }

  /**
   * This node's rows of the rank's share of a batch, in the epoch's order, and their places in the
   * share (null when they are all of it).
   */
  record Part(VectorSchemaRoot rows, int[] places) {}

  /** This node's part of batch {@code k} (the caller closes its rows), or null when it has none. */
  Part part(long k) {
    // Located by the stream that serves the batch, into arrays it keeps from part to part.
    share.locate(k, located, locatedRows);
    int size = located.length;
    int count = 0;
    for (int i = 0; i < size; i++) {
      if (localOf[located[i]] >= 0) {
        count++;
      }
    }
    if (count == 0) {
      return null;
    }
    int[] places = count == size ? null : new int[count];
    int j = 0;
    int i = 0;
    while (i < size) {
      int local = localOf[located[i]];
      if (local < 0) {
        i++;
        continue;
      }
      // Rows that follow each other in one slice (an ordered part, a unit of a run shuffle) are
      // located together.
      int n = 1;
      while (i + n < size
          && located[i + n] == located[i]
          && locatedRows[i + n] == locatedRows[i] + n) {
        n++;
      }
      gather.locate(local, locatedRows[i], n, source, indexIn, j);
      if (places != null) {
        for (int t = 0; t < n; t++) {
          places[j + t] = i + t;
        }
      }
      i += n;
      j += n;
    }
    return new Part(
        gather.gather(source, indexIn, count, leases.get(0).slice().allocator()), places);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        gather.close();
      } finally {
        leases.forEach(LoadedSlice.Lease::close);
      }
    }
  }
}
