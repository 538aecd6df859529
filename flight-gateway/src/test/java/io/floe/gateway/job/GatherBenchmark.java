package io.floe.gateway.job;

import io.floe.arrow.NodeAllocation;
import io.floe.job.EpochOrder;
import io.floe.job.OrderSettings;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * The job gather alone, without a node: nanoseconds a row to gather 4,096-row parts of a shuffled
 * epoch (default order: 4,096-row blocks, 16-block windows) from 4,000,000 rows in 65,536-row
 * source batches, with the bench table's column kinds (3 longs, an int, a float, a 6-11-byte and a
 * 20-26-byte string), by {@link GatherRuns} + {@link ColumnGather} and, side by side in the same
 * run, by Arrow's own per-value {@code copyFrom}/{@code copyFromSafe}. Prints each round; no
 * assertion (a benchmark, not a test).
 *
 * <p>{@code mvn -B -q -pl flight-gateway test-compile
 * org.codehaus.mojo:exec-maven-plugin:3.6.4:java
 * -Dexec.mainClass=io.floe.gateway.job.GatherBenchmark -Dexec.classpathScope=test}
 */
public final class GatherBenchmark {
  private static final int ROWS = 4_000_000;
  private static final int SOURCE_ROWS = 65_536;
  private static final String[] KINDS = {"long", "long", "long", "int", "float", "s1", "s2"};

  private GatherBenchmark() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int runRows = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    // 4,096: a global batch a record batch; 32,768: what the Python client asks for (several).
    int part = args.length > 2 ? Integer.parseInt(args[2]) : 4096;
    int sources = (ROWS + SOURCE_ROWS - 1) / SOURCE_ROWS;
    try (BufferAllocator allocator = NodeAllocation.root(Long.MAX_VALUE)) {
      FieldVector[][] columns = new FieldVector[KINDS.length][sources];
      ColumnGather[] gathers = new ColumnGather[KINDS.length];
      int[] sourceRows = new int[sources];
      long[] firstRow = new long[sources];
      for (int c = 0; c < KINDS.length; c++) {
        gathers[c] = new ColumnGather(sources);
      }
      for (int b = 0; b < sources; b++) {
        int rows = Math.min(SOURCE_ROWS, ROWS - b * SOURCE_ROWS);
        sourceRows[b] = rows;
        firstRow[b] = (long) b * SOURCE_ROWS;
        for (int c = 0; c < KINDS.length; c++) {
          columns[c][b] = column(KINDS[c], allocator, firstRow[b], rows);
          gathers[c].add(b, columns[c][b]);
        }
      }
      EpochOrder order =
          new EpochOrder(new long[] {ROWS}, new OrderSettings(1, true, 4096, 16, runRows), 0);
      int parts = ROWS / part;
      int[][] source = new int[parts][part];
      int[][] indexIn = new int[parts][part];
      int[] slices = new int[part];
      long[] rows = new long[part];
      for (int p = 0; p < parts; p++) {
        order.locate((long) p * part, part, slices, rows, 0);
        for (int i = 0; i < part; i++) {
          source[p][i] = (int) (rows[i] / SOURCE_ROWS);
          indexIn[p][i] = (int) (rows[i] % SOURCE_ROWS);
        }
      }
      long checksum = 0;
      System.out.printf(
          "ns a row (7 columns), shuffled in units of %d, parts of %d rows: Floe's gather | Arrow's"
              + " copyFrom | ratio%n",
          runRows, part);
      for (int round = 0; round < rounds; round++) {
        long started = System.nanoTime();
        for (int p = 0; p < parts; p++) {
          GatherRuns runs = GatherRuns.of(source[p], indexIn[p], part, sourceRows, firstRow);
          for (int c = 0; c < KINDS.length; c++) {
            try (FieldVector out = empty(KINDS[c], allocator)) {
              gathers[c].gather(out, runs);
              checksum += out.getValueCount();
            }
          }
        }
        long gathered = System.nanoTime();
        for (int p = 0; p < parts; p++) {
          for (int c = 0; c < KINDS.length; c++) {
            try (FieldVector out = empty(KINDS[c], allocator)) {
              out.setInitialCapacity(part);
              out.allocateNew();
              for (int i = 0; i < part; i++) {
                out.copyFromSafe(indexIn[p][i], i, columns[c][source[p][i]]);
              }
              out.setValueCount(part);
              checksum += out.getValueCount();
            }
          }
        }
        long copied = System.nanoTime();
        double floe = (gathered - started) / (double) ROWS;
        double arrow = (copied - gathered) / (double) ROWS;
        System.out.printf("round %d: %.1f | %.1f | %.2fx%n", round, floe, arrow, arrow / floe);
      }
      System.out.println("(checksum " + checksum + ")");
      for (FieldVector[] kind : columns) {
        for (FieldVector column : kind) {
          column.close();
        }
      }
    }
  }

  private static FieldVector empty(String kind, BufferAllocator allocator) {
    return switch (kind) {
      case "long" -> new BigIntVector(kind, allocator);
      case "int" -> new IntVector(kind, allocator);
      case "float" -> new Float4Vector(kind, allocator);
      default -> new VarCharVector(kind, allocator);
    };
  }

  private static FieldVector column(String kind, BufferAllocator allocator, long first, int rows) {
    FieldVector vector = empty(kind, allocator);
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    for (int i = 0; i < rows; i++) {
      long x = first + i;
      switch (kind) {
        case "long" -> ((BigIntVector) vector).set(i, x);
        case "int" -> ((IntVector) vector).set(i, (int) x);
        case "float" -> ((Float4Vector) vector).set(i, x);
        case "s1" -> ((VarCharVector) vector).setSafe(i, word(x, 6 + (int) (x % 6)));
        default -> ((VarCharVector) vector).setSafe(i, word(x, 20 + (int) (x % 7)));
      }
    }
    vector.setValueCount(rows);
    return vector;
  }

  private static byte[] word(long seed, int length) {
    StringBuilder text = new StringBuilder(length);
    long state = seed * 0x9E3779B97F4A7C15L + 1;
    for (int i = 0; i < length; i++) {
      state ^= state << 13;
      state ^= state >>> 7;
      state ^= state << 17;
      text.append((char) ('a' + Math.floorMod(state, 26)));
    }
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }
}
