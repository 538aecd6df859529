package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BiConsumer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.ValueVectorUtility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The direct column copy gives exactly what Arrow's own {@code copyFromSafe} gives, value for value
 * and null for null, for every vector kind it handles, from several source batches in random order
 * with runs of consecutive rows and rows drawn twice; and the memory it takes is all given back.
 */
class ColumnGatherTest {
  private static final int BATCHES = 3;
  private static final int ROWS_PER_BATCH = 200;

  private interface Factory {
    FieldVector create(String name, BufferAllocator allocator);
  }

  /** A vector kind: how to make one, and how to set row {@code i} to its value. */
  private record Kind(String name, Factory factory, BiConsumer<FieldVector, Integer> setter) {}

  private static byte[] bytes(int i, int length) {
    byte[] b = new byte[length];
    for (int k = 0; k < length; k++) {
      b[k] = (byte) (i * 31 + k);
    }
    return b;
  }

  private static List<Kind> kinds() {
    return List.of(
        new Kind(
            "bigint", BigIntVector::new, (v, i) -> ((BigIntVector) v).setSafe(i, i * 1_000_003L)),
        new Kind("int", IntVector::new, (v, i) -> ((IntVector) v).setSafe(i, -i * 7)),
        new Kind("smallint", SmallIntVector::new, (v, i) -> ((SmallIntVector) v).setSafe(i, i)),
        new Kind("tinyint", TinyIntVector::new, (v, i) -> ((TinyIntVector) v).setSafe(i, i % 100)),
        new Kind("float", Float4Vector::new, (v, i) -> ((Float4Vector) v).setSafe(i, i / 3f)),
        new Kind(
            "decimal",
            (n, a) -> new DecimalVector(n, a, 20, 2),
            (v, i) -> ((DecimalVector) v).setSafe(i, BigDecimal.valueOf(i * 12_345L, 2))),
        new Kind(
            "fixed3",
            (n, a) -> new FixedSizeBinaryVector(n, a, 3),
            (v, i) -> ((FixedSizeBinaryVector) v).setSafe(i, bytes(i, 3))),
        new Kind(
            "string",
            VarCharVector::new,
            (v, i) ->
                ((VarCharVector) v)
                    .setSafe(
                        i, ("row-" + "x".repeat(i % 13) + i).getBytes(StandardCharsets.UTF_8))),
        new Kind(
            "binary",
            VarBinaryVector::new,
            (v, i) -> ((VarBinaryVector) v).setSafe(i, bytes(i, i % 5))));
  }

  /** The runs of a part drawn from {@code batches} source batches of {@code rows} rows each. */
  private static GatherRuns runs(int[] batchOf, int[] indexIn, int count, int rows, int batches) {
    int[] sourceRows = new int[batches];
    long[] firstRow = new long[batches];
    for (int b = 0; b < batches; b++) {
      sourceRows[b] = rows;
      firstRow[b] = (long) b * rows;
    }
    return GatherRuns.of(batchOf, indexIn, count, sourceRows, firstRow);
  }

  /**
   * Rows of a part: {@code shuffled} at random with some runs and repeats, {@code single} at random
   * one by one, {@code units} in runs of 8 from random places (a job's units), {@code ordered} in
   * the sources' order in long runs (an unshuffled job's part), {@code stepped} in the sources'
   * order with a gap every few rows (short runs).
   */
  private static void choose(String shape, Random random, int[] batchOf, int[] indexIn) {
    int count = batchOf.length;
    int at = 0;
    for (int i = 0; i < count; i++) {
      switch (shape) {
        case "shuffled" -> {
          // Runs of consecutive rows (copied in bulk, across nulls) mixed with random rows.
          boolean extendsRun =
              i > 0 && indexIn[i - 1] + 1 < ROWS_PER_BATCH && random.nextInt(4) != 0;
          batchOf[i] = extendsRun ? batchOf[i - 1] : random.nextInt(BATCHES);
          indexIn[i] = extendsRun ? indexIn[i - 1] + 1 : random.nextInt(ROWS_PER_BATCH);
        }
        case "single" -> {
          batchOf[i] = random.nextInt(BATCHES);
          indexIn[i] = random.nextInt(ROWS_PER_BATCH);
        }
        case "units" -> {
          // A job shuffled in units of 8 neighbouring rows: runs of 8 (shorter at a batch's end).
          boolean extendsRun = i % 8 != 0 && indexIn[i - 1] + 1 < ROWS_PER_BATCH;
          batchOf[i] = extendsRun ? batchOf[i - 1] : random.nextInt(BATCHES);
          indexIn[i] = extendsRun ? indexIn[i - 1] + 1 : random.nextInt(ROWS_PER_BATCH);
        }
        case "ordered" -> at = i == 0 ? 13 : at + 1;
        case "stepped" -> at = i == 0 ? 0 : at + 1 + (i % 3 == 0 ? 1 : 0);
        default -> throw new IllegalArgumentException(shape);
      }
      if (shape.equals("ordered") || shape.equals("stepped")) {
        batchOf[i] = at / ROWS_PER_BATCH;
        indexIn[i] = at % ROWS_PER_BATCH;
      }
    }
  }

  @ParameterizedTest
  @CsvSource({
    "0, shuffled",
    "1, shuffled",
    "17, shuffled",
    "450, shuffled",
    "450, single",
    "450, units",
    "7, units",
    "450, ordered",
    "1, ordered",
    "420, stepped"
  })
  void copiesWhatArrowCopies(int count, String shape) {
    Random random = new Random(count);
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Kind kind : kinds()) {
        List<FieldVector> sources = sources(kind, allocator);
        try {
          assertThat(ColumnGather.handles(sources.get(0))).as(kind.name()).isTrue();
          int[] batchOf = new int[count];
          int[] indexIn = new int[count];
          choose(shape, random, batchOf, indexIn);
          assertCopied(
              kind,
              sources,
              batchOf,
              indexIn,
              runs(batchOf, indexIn, count, ROWS_PER_BATCH, BATCHES),
              allocator);
        } finally {
          sources.forEach(FieldVector::close);
        }
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  /**
   * A stream keeps one scratch from part to part; parts larger and smaller than the last, of every
   * shape, find its arrays holding the last part's values past their own rows.
   */
  @Test
  void aScratchKeptFromPartToPartCopiesEachPartAsAFreshOne() {
    String[] shapes = {"shuffled", "shuffled", "ordered", "shuffled", "stepped", "shuffled"};
    int[] counts = {450, 17, 450, 1, 420, 449};
    Random random = new Random(3);
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Kind kind : kinds()) {
        List<FieldVector> sources = sources(kind, allocator);
        GatherScratch scratch = GatherRuns.newScratch();
        try {
          for (int p = 0; p < counts.length; p++) {
            int[] batchOf = new int[counts[p]];
            int[] indexIn = new int[counts[p]];
            choose(shapes[p], random, batchOf, indexIn);
            int[] sourceRows = new int[BATCHES];
            long[] firstRow = new long[BATCHES];
            for (int b = 0; b < BATCHES; b++) {
              sourceRows[b] = ROWS_PER_BATCH;
              firstRow[b] = (long) b * ROWS_PER_BATCH;
            }
            GatherRuns runs =
                GatherRuns.of(batchOf, indexIn, counts[p], sourceRows, firstRow, scratch);
            assertCopied(kind, sources, batchOf, indexIn, runs, allocator);
          }
        } finally {
          sources.forEach(FieldVector::close);
        }
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  /** {@link #BATCHES} source batches of {@code kind}; batch 1 has no nulls, the others some. */
  private static List<FieldVector> sources(Kind kind, BufferAllocator allocator) {
    List<FieldVector> sources = new ArrayList<>();
    for (int b = 0; b < BATCHES; b++) {
      FieldVector source = kind.factory().create(kind.name(), allocator);
      sources.add(source);
      source.allocateNew();
      for (int i = 0; i < ROWS_PER_BATCH; i++) {
        if (b == 1 || i % 7 != 3) {
          kind.setter().accept(source, b * ROWS_PER_BATCH + i);
        }
      }
      source.setValueCount(ROWS_PER_BATCH);
    }
    return sources;
  }

  /** Gathers {@code runs} and compares the result with Arrow's own copies, value by value. */
  private static void assertCopied(
      Kind kind,
      List<FieldVector> sources,
      int[] batchOf,
      int[] indexIn,
      GatherRuns runs,
      BufferAllocator allocator) {
    int count = batchOf.length;
    ColumnGather gather = new ColumnGather(BATCHES);
    for (int b = 0; b < BATCHES; b++) {
      gather.add(b, sources.get(b));
    }
    try (FieldVector direct = kind.factory().create(kind.name(), allocator);
        FieldVector expected = kind.factory().create(kind.name(), allocator)) {
      gather.gather(direct, runs);
      expected.allocateNew();
      for (int i = 0; i < count; i++) {
        expected.copyFromSafe(indexIn[i], i, sources.get(batchOf[i]));
      }
      expected.setValueCount(count);

      assertThat(direct.getValueCount()).isEqualTo(count);
      assertThat(direct.getNullCount()).as(kind.name()).isEqualTo(expected.getNullCount());
      for (int i = 0; i < count; i++) {
        assertThat(direct.getObject(i))
            .as(kind.name() + " row " + i)
            .isEqualTo(expected.getObject(i));
      }
    }
  }

  @Test
  void readsBatchesLoadedFromIpcWithAndWithoutValidityBuffers() {
    try (BufferAllocator allocator = new RootAllocator()) {
      // Batch 0 has no nulls (loaded with a validity buffer Arrow makes itself), batch 1 only
      // nulls.
      List<VectorSchemaRoot> loaded = new ArrayList<>();
      try {
        for (int b = 0; b < 2; b++) {
          try (VarCharVector written = new VarCharVector("s", allocator)) {
            written.allocateNew();
            for (int i = 0; i < 50; i++) {
              if (b == 0) {
                written.setSafe(i, ("v" + i).getBytes(StandardCharsets.UTF_8));
              }
            }
            written.setValueCount(50);
            try (VectorSchemaRoot root = VectorSchemaRoot.of(written);
                ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
              VectorSchemaRoot view = VectorSchemaRoot.create(root.getSchema(), allocator);
              loaded.add(view);
              new VectorLoader(view).load(batch);
            }
          }
        }
        ColumnGather gather = new ColumnGather(2);
        gather.add(0, loaded.get(0).getVector(0));
        gather.add(1, loaded.get(1).getVector(0));
        try (VarCharVector out = new VarCharVector("s", allocator)) {
          gather.gather(out, runs(new int[] {0, 1, 0, 1}, new int[] {49, 3, 0, 0}, 4, 50, 2));
          ValueVectorUtility.validateFull(out);
          assertThat(out.getObject(0)).hasToString("v49");
          assertThat(out.isNull(1)).isTrue();
          assertThat(out.getObject(2)).hasToString("v0");
          assertThat(out.isNull(3)).isTrue();
        }
      } finally {
        loaded.forEach(VectorSchemaRoot::close);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void copiesValuesThatEndTheirBufferExactly() {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (VarCharVector written = new VarCharVector("s", allocator)) {
        written.allocateNew();
        int rows = 9;
        for (int i = 0; i < rows; i++) {
          written.setSafe(i, ("v" + "x".repeat(i % 5) + i).getBytes(StandardCharsets.UTF_8));
        }
        written.setValueCount(rows);
        int used = written.getOffsetBuffer().getInt((long) rows * 4);
        // As a batch read from IPC holds it: the data buffer ends where the last value does, so a
        // word read past a value's end would leave the buffer.
        ArrowBuf data = written.getDataBuffer().slice(0, used); // a view: the batch retains it
        try (ArrowRecordBatch batch =
                new ArrowRecordBatch(
                    rows,
                    List.of(new ArrowFieldNode(rows, 0)),
                    List.of(written.getValidityBuffer(), written.getOffsetBuffer(), data));
            VectorSchemaRoot view =
                VectorSchemaRoot.create(VectorSchemaRoot.of(written).getSchema(), allocator)) {
          new VectorLoader(view).load(batch);
          FieldVector source = view.getVector(0);
          assertThat(source.getDataBuffer().capacity()).isEqualTo(used);
          ColumnGather gather = new ColumnGather(1);
          gather.add(0, source);
          int[] indexIn = {8, 3, 7, 0, 6, 1, 5, 2, 4};
          try (VarCharVector out = new VarCharVector("s", allocator)) {
            gather.gather(out, runs(new int[rows], indexIn, rows, rows, 1));
            ValueVectorUtility.validateFull(out);
            for (int i = 0; i < rows; i++) {
              assertThat(out.getObject(i)).hasToString(written.getObject(indexIn[i]).toString());
            }
          }
        }
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void refusesARowOutsideItsBatch() {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (IntVector source = new IntVector("i", allocator);
          IntVector out = new IntVector("i", allocator)) {
        source.allocateNew(10);
        source.setValueCount(10);
        assertThatThrownBy(() -> runs(new int[] {0}, new int[] {10}, 1, 10, 1))
            .isInstanceOf(IndexOutOfBoundsException.class)
            .hasMessageContaining("Row 10 is outside source batch 0 of 10 rows");
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void leavesBitsNestedAndLargeOffsetsToArrow() {
    try (BufferAllocator allocator = new RootAllocator();
        BitVector bits = new BitVector("b", allocator);
        LargeVarCharVector large = new LargeVarCharVector("l", allocator);
        ListVector list =
            new ListVector("list", allocator, FieldType.nullable(ArrowType.List.INSTANCE), null)) {
      assertThat(ColumnGather.handles(bits)).isFalse();
      assertThat(ColumnGather.handles(large)).isFalse();
      assertThat(ColumnGather.handles(list)).isFalse();
    }
  }
}
