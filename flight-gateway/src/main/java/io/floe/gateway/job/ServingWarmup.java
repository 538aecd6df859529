package io.floe.gateway.job;

import io.floe.gateway.FlightFrame;
import io.floe.job.EpochOrder;
import io.floe.job.EpochShape;
import io.floe.job.JobRead;
import io.floe.job.OrderSettings;
import io.floe.job.RankShare;
import io.floe.job.TailPolicy;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves shuffled and ordered job batches from a small synthetic dataset, in this process and to
 * nowhere, so that the JIT has compiled the gather and the framing before a reader's first epoch
 * (which otherwise runs at about half the speed of the next ones). Its memory comes from a child of
 * the node's allocator and is given back before it ends; it runs once, on a thread of its own,
 * after the node serves.
 */
public final class ServingWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(ServingWarmup.class);
  private static final int SLICES = 4;
  private static final int SLICE_ROWS = 50_000;
  private static final int SLICE_BATCH_ROWS = 8_192;
  private static final int BATCH_ROWS = 4_096;
  private static final int ROUNDS = 64;

  /** Several global batches to a record batch, as the Python client asks. */
  private static final int BATCHES_PER_MESSAGE = 8;

  private final Thread thread;
  private volatile boolean stopped;

  private ServingWarmup(BufferAllocator nodeAllocator, Duration budget) {
    this.thread =
        new Thread(
            () -> {
              try {
                run(nodeAllocator, budget);
              } catch (RuntimeException | OutOfMemoryError e) {
                // A node without room for it serves all the same, only colder.
                LOG.debug("Serving warm-up skipped: {}", e.toString());
              }
            },
            "floe-serving-warmup");
    thread.setDaemon(true);
    thread.setPriority(Thread.MIN_PRIORITY);
  }

  /** Starts the warm-up on a thread of its own; it ends after {@code budget} or when done. */
  public static ServingWarmup start(BufferAllocator nodeAllocator, Duration budget) {
    ServingWarmup warmup = new ServingWarmup(nodeAllocator, budget);
    warmup.thread.start();
    return warmup;
  }

  /** Ends the warm-up and waits until it has given its memory back (before the node closes). */
  public void stop() {
    stopped = true;
    awaitEnd(Duration.ofSeconds(10));
  }

  /** Waits up to {@code timeout} for the warm-up to end by itself; answers whether it has. */
  public boolean awaitEnd(Duration timeout) {
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !thread.isAlive();
  }

  private boolean goOn(long deadline) {
    return !stopped && System.nanoTime() < deadline;
  }

  private void run(BufferAllocator nodeAllocator, Duration budget) {
    long started = System.nanoTime();
    long deadline = started + budget.toNanos();
    Schema schema = schema();
    List<LoadedSlice> slices = new ArrayList<>();
    try (BufferAllocator allocator =
            nodeAllocator.newChildAllocator("serving warm-up", 0, 256L << 20);
        AllocatorReaper reaper = new AllocatorReaper()) {
      try {
        for (int s = 0; s < SLICES && goOn(deadline); s++) {
          slices.add(slice(s, schema, allocator, reaper));
        }
        long batches = 0;
        long[] sliceRows = new long[slices.size()];
        java.util.Arrays.fill(sliceRows, SLICE_ROWS);
        for (int round = 0; round < ROUNDS && slices.size() == SLICES && goOn(deadline); round++) {
          batches += serve(slices, sliceRows, schema, round % 4 != 3, round, deadline);
        }
        LOG.info(
            "Serving path warmed up: {} job batches in {} ms",
            batches,
            (System.nanoTime() - started) / 1_000_000);
      } finally {
        slices.forEach(LoadedSlice::release);
      }
    }
  }

  /** One epoch (or what the deadline leaves of it) of a rank of two, gathered and framed. */
  private long serve(
      List<LoadedSlice> slices,
      long[] sliceRows,
      Schema schema,
      boolean shuffle,
      int epoch,
      long deadline) {
    OrderSettings order = new OrderSettings(epoch, shuffle, 1_024, 16);
    EpochShape shape = new EpochShape(SLICES * (long) SLICE_ROWS, BATCH_ROWS, TailPolicy.DROP);
    RankShare share = new RankShare(shape, new EpochOrder(sliceRows, order, epoch), 2, 0);
    // Half the slices here, so that the places are sent as well.
    int[] localOf = new int[SLICES];
    List<LoadedSlice.Lease> leases = new ArrayList<>();
    for (int s = 0; s < SLICES; s++) {
      localOf[s] = s % 2 == 0 ? leases.size() : -1;
      if (s % 2 == 0) {
        leases.add(slices.get(s).acquire().orElseThrow());
      }
    }
    JobRead read =
        new JobRead(
            "warm-up", epoch, order, BATCH_ROWS, TailPolicy.DROP, 2, 0, 0, shape.batches(), 1);
    long served = 0;
    try (NodeJobBatches batches =
        new NodeJobBatches(
            leases, localOf, read, share, schema, BATCHES_PER_MESSAGE, new GatherStagings(2))) {
      batches.schema().releaseUnclaimed();
      FlightFrame frame;
      while (goOn(deadline) && (frame = batches.next()) != null) {
        frame.releaseUnclaimed(); // encoded as for the wire, then dropped
        served++;
      }
    }
    return served;
  }

  private static Schema schema() {
    return new Schema(
        List.of(
            Field.nullable("id", new ArrowType.Int(64, true)),
            Field.nullable("label", new ArrowType.Int(32, true)),
            Field.nullable("score", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            new Field("text", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  }

  private static LoadedSlice slice(
      int index, Schema schema, BufferAllocator parent, AllocatorReaper reaper) {
    BufferAllocator allocator =
        parent.newChildAllocator("warm-up slice " + index, 0, Long.MAX_VALUE);
    List<ArrowRecordBatch> batches = new ArrayList<>();
    try {
      for (int start = 0; start < SLICE_ROWS; start += SLICE_BATCH_ROWS) {
        int rows = Math.min(SLICE_BATCH_ROWS, SLICE_ROWS - start);
        try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
          BigIntVector id = (BigIntVector) root.getVector(0);
          IntVector label = (IntVector) root.getVector(1);
          Float8Vector score = (Float8Vector) root.getVector(2);
          VarCharVector text = (VarCharVector) root.getVector(3);
          root.allocateNew();
          for (int i = 0; i < rows; i++) {
            long row = (long) index * SLICE_ROWS + start + i;
            id.setSafe(i, row);
            if (row % 7 != 0) {
              label.setSafe(i, (int) (row % 3));
            }
            score.setSafe(i, row * 0.5);
            text.setSafe(i, ("row " + row).getBytes(StandardCharsets.UTF_8));
          }
          root.setRowCount(rows);
          batches.add(new VectorUnloader(root).getRecordBatch());
        }
      }
      return new LoadedSlice("warm-up/" + index, schema, batches, allocator, reaper, "warm-up");
    } catch (RuntimeException e) {
      batches.forEach(ArrowRecordBatch::close);
      allocator.close();
      throw e;
    }
  }
}
