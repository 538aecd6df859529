package io.floe.gateway.job;

import io.floe.gateway.FlightFrame;
import io.floe.gateway.StagedBatchSource;
import io.floe.gateway.job.GatherStagings.Staging;
import io.floe.job.JobRead;
import io.floe.job.RankShare;
import io.floe.store.LoadedSlice;
import io.floe.ticket.JobBatchMetadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A job read's batches on the node the plan placed them on: for each listed global batch, the rows
 * of the rank's share that sit in this node's slices, gathered from all of them in the epoch's
 * order, with the batch indices and the rows' places in the share as metadata ({@link
 * JobBatchMetadata}). Consecutive listed batches go into one record batch, up to {@code
 * batchesPerMessage} of them and {@link #MESSAGE_ROWS_MAX} rows: each record batch costs the node
 * (framing, a hand-over between threads, the socket) whatever its size. A batch none of whose rows
 * are here is not sent. Holds a lease on each of those slices until closed.
 *
 * <p>A record batch is planned (its rows located, in order, one at a time) and then gathered, which
 * may happen on other threads beside the gathering of the next ones ({@link StagedBatchSource}):
 * each planned record batch has working arrays of its own from the node's {@link GatherStagings}.
 */
final class NodeJobBatches implements StagedBatchSource {
  /**
   * A record batch ends at this many rows, or at one batch's share if that is more: twice the plain
   * stream's batches (the load's 32,768 rows) at most, so that what a stream gathers ahead, and the
   * working arrays of each record batch (about 2 MB of heap at 32,768 rows), stay small.
   */
  static final int MESSAGE_ROWS_MAX = 1 << 16;

  private final List<LoadedSlice.Lease> leases;
  private final int[] localOf;
  private final JobRead read;
  private final RankShare share;
  private final Schema projected;
  private final RowGather gather;
  private final int batchesPerMessage;
  private final int room;

  /** One batch's rows of the rank's share, located: slice by slice and row by row. */
  private final int[] located;

  private final long[] locatedRows;

  private final long[] messageBatches;
  private final int[] messageRows;

  /** Where record batches' working arrays come from, and go back to once gathered. */
  private final GatherStagings stagings;

  /**
   * A batch located while the record batch before it was planned, which it did not join: its rows'
   * sources and places, kept here (one batch's worth, not a whole set of working arrays) until the
   * next plan starts with them; {@code carried} is -1 when there is none.
   */
  private final int[] carriedSource;

  private final int[] carriedIndexIn;
  private final int[] carriedPlaces;
  private long carried = -1;
  private int carriedRows;
  private long next;
  private volatile boolean closed;

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
      Schema projected,
      int batchesPerMessage,
      GatherStagings stagings) {
    this.stagings = stagings;
    this.leases = List.copyOf(leases);
    this.localOf = localOf;
    this.read = read;
    this.share = share;
    this.projected = projected;
    List<LoadedSlice> slices = new ArrayList<>(leases.size());
    leases.forEach(lease -> slices.add(lease.slice()));
    this.gather = new RowGather(slices, projected);
    int rows = share.rowsPerBatch();
    this.batchesPerMessage =
        (int)
            Math.max(
                1, Math.min(batchesPerMessage, Math.max(1, MESSAGE_ROWS_MAX / Math.max(1, rows))));
    this.located = new int[rows];
    this.locatedRows = new long[rows];
    this.carriedSource = new int[rows];
    this.carriedIndexIn = new int[rows];
    this.carriedPlaces = new int[rows];
    this.room = Math.multiplyExact(rows, this.batchesPerMessage);
    this.messageBatches = new long[this.batchesPerMessage];
    this.messageRows = new int[this.batchesPerMessage];
    this.next = read.batchFrom();
  }

  @Override
  public FlightFrame schema() {
    return FlightFrame.schema(projected);
  }

  /**
   * A planned record batch: which batches it holds and where their rows are; {@link #rows()}
   * gathers them (once, on any thread), {@link #make()} gathers and encodes them.
   */
  final class Planned implements Work {
    private final Staging staging;
    private final int count;
    private final JobBatchMetadata metadata;
    private final ColumnGather[] copiers;

    private Planned(Staging staging, int count, JobBatchMetadata metadata) {
      this.staging = staging;
      this.count = count;
      this.metadata = metadata;
      this.copiers = gather.copiers();
    }

    JobBatchMetadata metadata() {
      return metadata;
    }

    /** The record batch's rows (the caller closes them). */
    VectorSchemaRoot rows() {
      try {
        return gather.gather(
            staging.source,
            staging.indexIn,
            count,
            leases.get(0).slice().allocator(),
            staging.scratch,
            copiers);
      } finally {
        give(staging);
      }
    }

    @Override
    public FlightFrame make() {
      try (VectorSchemaRoot rows = rows();
          ArrowRecordBatch batch = new VectorUnloader(rows).getRecordBatch()) {
        return FlightFrame.batch(batch, metadata.encode());
      }
    }
  }

  /**
   * Plans the next record batch, or answers null when no listed batch is left with rows here. It
   * takes the listed batches that have rows here in order while there is room. A record batch whose
   * rows are one run of one of the slices' batches is served by reference (an ordered job's, nearly
   * always): a batch that would break that run starts the next record batch instead, as does a
   * batch that is such a run itself after batches that are not.
   */
  @Override
  public Planned plan() {
    Staging staging = take();
    int batches = 0;
    int count = 0;
    boolean oneRun = false;
    if (carried >= 0) {
      System.arraycopy(carriedSource, 0, staging.source, 0, carriedRows);
      System.arraycopy(carriedIndexIn, 0, staging.indexIn, 0, carriedRows);
      System.arraycopy(carriedPlaces, 0, staging.places, 0, carriedRows);
      batches = 1;
      count = carriedRows;
      messageBatches[0] = carried;
      messageRows[0] = carriedRows;
      oneRun = oneRun(staging, 0, count);
      carried = -1;
    }
    while (batches < batchesPerMessage && next < read.batchTo()) {
      long k = next;
      next += read.batchStep();
      int n = locate(k, staging, count);
      if (n == 0) {
        continue;
      }
      if (batches > 0) {
        boolean run = oneRun(staging, count, n);
        boolean joins = oneRun ? run && continues(staging, count) : !run;
        if (!joins) {
          // The batch located after the record batch's rows starts the next one.
          System.arraycopy(staging.source, count, carriedSource, 0, n);
          System.arraycopy(staging.indexIn, count, carriedIndexIn, 0, n);
          System.arraycopy(staging.places, count, carriedPlaces, 0, n);
          carried = k;
          carriedRows = n;
          return planned(staging, batches, count);
        }
      } else {
        oneRun = oneRun(staging, 0, n);
      }
      messageBatches[batches] = k;
      messageRows[batches] = n;
      batches++;
      count += n;
    }
    if (batches == 0) {
      give(staging);
      return null;
    }
    return planned(staging, batches, count);
  }

  private Planned planned(Staging staging, int batches, int count) {
    boolean whole = true;
    for (int b = 0; b < batches && whole; b++) {
      whole = messageRows[b] == share.rowsPerBatch();
    }
    return new Planned(
        staging,
        count,
        new JobBatchMetadata(
            Arrays.copyOf(messageBatches, batches),
            Arrays.copyOf(messageRows, batches),
            whole ? null : Arrays.copyOf(staging.places, count)));
  }

  private Staging take() {
    return stagings.take(room);
  }

  private void give(Staging staging) {
    stagings.give(staging);
  }

  /**
   * Notes this node's rows of batch {@code k} in {@code staging} from {@code at} on; answers how
   * many.
   */
  private int locate(long k, Staging staging, int at) {
    // Located by the stream that serves the batch, into arrays it keeps from batch to batch.
    share.locate(k, located, locatedRows);
    int size = located.length;
    int j = at;
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
      gather.locate(local, locatedRows[i], n, staging.source, staging.indexIn, j);
      for (int t = 0; t < n; t++) {
        staging.places[j + t] = i + t;
      }
      i += n;
      j += n;
    }
    return j - at;
  }

  /**
   * Whether rows {@code [from, from + n)} noted are one run of one source batch, of more than one
   * row (a lone row is not worth a record batch of its own).
   */
  private static boolean oneRun(Staging staging, int from, int n) {
    if (n < 2) {
      return false;
    }
    int first = staging.source[from];
    int index = staging.indexIn[from];
    for (int t = 1; t < n; t++) {
      if (staging.source[from + t] != first || staging.indexIn[from + t] != index + t) {
        return false;
      }
    }
    return true;
  }

  /** Whether the row noted at {@code at} follows the one before it in the same source batch. */
  private static boolean continues(Staging staging, int at) {
    return staging.source[at] == staging.source[at - 1]
        && staging.indexIn[at] == staging.indexIn[at - 1] + 1;
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
