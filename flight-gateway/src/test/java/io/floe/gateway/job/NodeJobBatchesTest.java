package io.floe.gateway.job;

import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.arrow.ArrowSchemas;
import io.floe.arrow.RecordBatchBuilder;
import io.floe.job.EpochOrder;
import io.floe.job.EpochShape;
import io.floe.job.JobRead;
import io.floe.job.OrderSettings;
import io.floe.job.RankShare;
import io.floe.job.TailPolicy;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import io.floe.testing.ArrowRecords;
import io.floe.testing.TestRows;
import io.floe.ticket.JobBatchMetadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A rank's share of every global batch, put together from the parts two nodes gather from their
 * slices by the places each part carries, is row for row and value for value the share the epoch
 * order defines: for every column type the loader produces (lists, maps, structs, binary, fixed,
 * decimals, times), with nulls, across slice and slice-batch boundaries, at every world size from 1
 * to 8, with either tail policy. A node none of whose slices holds a row of a batch sends nothing
 * for it, and every byte gathered is given back.
 */
class NodeJobBatchesTest {
  private static final long[] SLICE_ROWS = {137, 300, 63, 700, 90, 710};
  private static final int SLICE_BATCH_ROWS = 256;
  private static final int BATCH_ROWS = 840; // divisible by 1..8
  private static final String[] HOLDERS = {"grpc+tcp://127.0.0.1:1", "grpc+tcp://127.0.0.1:2"};
  private static final OrderSettings SHUFFLED = new OrderSettings(11, true, 16, 4);
  private static final OrderSettings ORDERED = new OrderSettings(11, false, 16, 4);

  /** Units of 5 rows in blocks of 16: every block ends in a short unit. */
  private static final OrderSettings UNITS = new OrderSettings(11, true, 16, 4, 5);

  private BufferAllocator root;
  private final AllocatorReaper reaper = new AllocatorReaper();
  private final GatherStagings stagings = new GatherStagings(4);
  private final List<LoadedSlice> slices = new ArrayList<>();
  private final List<List<Record>> sliceRecords = new ArrayList<>();
  private Schema schema;

  @BeforeEach
  void loadSlices() {
    root = new RootAllocator();
    schema = ArrowSchemas.fromIceberg(TestRows.ALL_TYPES);
    long first = 0;
    for (int s = 0; s < SLICE_ROWS.length; s++) {
      List<Record> records = TestRows.rows(TestRows.allTypes(5), first, first + SLICE_ROWS[s]);
      first += SLICE_ROWS[s];
      BufferAllocator allocator = root.newChildAllocator("slice " + s, 0, Long.MAX_VALUE);
      List<ArrowRecordBatch> batches = new ArrayList<>();
      try (RecordBatchBuilder builder =
          new RecordBatchBuilder(
              allocator, TestRows.ALL_TYPES, TestRows.ALL_TYPES.asStruct(), SLICE_BATCH_ROWS)) {
        for (Record record : records) {
          if (builder.add(record)) {
            batches.add(builder.finish());
          }
        }
        if (builder.rows() > 0) {
          batches.add(builder.finish());
        }
      }
      slices.add(new LoadedSlice("d/1/s" + s, schema, batches, allocator, reaper, "generic"));
      sliceRecords.add(records);
    }
  }

  @AfterEach
  void freeSlices() {
    slices.forEach(LoadedSlice::release);
    reaper.close();
    assertThat(root.getAllocatedMemory()).as("bytes still allocated").isZero();
    root.close();
  }

  private static OrderSettings settings(String kind) {
    return switch (kind) {
      case "SHUFFLED" -> SHUFFLED;
      case "ORDERED" -> ORDERED;
      default -> UNITS;
    };
  }

  /** Slice s is on node s % 2: both nodes hold rows of most batches, in turn within them. */
  private static int holderOf(int slice) {
    return slice % 2;
  }

  /**
   * Shuffled parts are gathered row by row, parts of a job shuffled in units as runs; an ordered
   * job's parts are mostly one run of one source batch, served by reference (Arrow's split), the
   * rest gathered in runs. Each record batch holds one global batch's part, or up to {@code
   * perMessage} consecutive ones.
   */
  @ParameterizedTest
  @CsvSource({
    "DROP, SHUFFLED, 1",
    "PAD, SHUFFLED, 1",
    "DROP, ORDERED, 1",
    "PAD, ORDERED, 1",
    "DROP, UNITS, 1",
    "PAD, UNITS, 1",
    "DROP, SHUFFLED, 3",
    "PAD, ORDERED, 3",
    "PAD, UNITS, 64",
    "DROP, ORDERED, 64"
  })
  void partsPutTogetherByTheirPlacesAreTheRanksShareAtEveryWorldSize(
      TailPolicy tail, String kind, int perMessage) {
    OrderSettings settings = settings(kind);
    long rows = Arrays.stream(SLICE_ROWS).sum();
    EpochShape shape = new EpochShape(rows, BATCH_ROWS, tail);
    for (int epoch = 0; epoch < 2; epoch++) {
      EpochOrder order = new EpochOrder(SLICE_ROWS, settings, epoch);
      for (int world = 1; world <= 8; world++) {
        for (int rank = 0; rank < world; rank++) {
          RankShare share = new RankShare(shape, order, world, rank);
          List<Map<Long, Part>> streams = new ArrayList<>();
          for (int h = 0; h < HOLDERS.length; h++) {
            try (NodeJobBatches node =
                node(h, epoch, settings, world, rank, tail, shape.batches(), share, perMessage)) {
              streams.add(parts(node, perMessage));
            }
          }
          for (long k = 0; k < shape.batches(); k++) {
            assertSameRows(assembled(streams, k, share.rowsPerBatch()), expected(share, k));
          }
          // Streams read to their end and closed give their working arrays back for others.
          assertThat(stagings.kept()).isPositive();
        }
      }
    }
  }

  /**
   * Record batches planned ahead and then gathered on several threads at once, in reverse order,
   * are what planning and gathering one after the other gives: a gather depends only on its own
   * plan, not on the plans made after it (which view more of the slices' batches), and gathers
   * running at once do not disturb each other (Arrow copies a nested value through its source
   * vector's one reader, whose position two copies from the same view would both move). Many
   * rounds, since a race shows only now and then.
   */
  @ParameterizedTest
  @CsvSource({"SHUFFLED", "ORDERED", "UNITS"})
  void recordBatchesPlannedAheadGatherTheSameOnOtherThreadsInAnyOrder(String kind)
      throws Exception {
    for (int round = 0; round < GATHER_ROUNDS; round++) {
      gatherAheadOnThreads(kind);
    }
  }

  private static final int GATHER_ROUNDS = 40;

  private void gatherAheadOnThreads(String kind) throws Exception {
    OrderSettings settings = settings(kind);
    long rows = Arrays.stream(SLICE_ROWS).sum();
    EpochShape shape = new EpochShape(rows, BATCH_ROWS, TailPolicy.PAD);
    EpochOrder order = new EpochOrder(SLICE_ROWS, settings, 1);
    // World size 1: every record batch is whole batches of the slices' rows, so gathers running
    // at once copy long runs of the same columns' nested values.
    RankShare share = new RankShare(shape, order, 1, 0);
    java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<Map<Long, Part>> streams = new ArrayList<>();
      for (int h = 0; h < HOLDERS.length; h++) {
        try (NodeJobBatches node =
            node(h, 1, settings, 1, 0, TailPolicy.PAD, shape.batches(), share, 1)) {
          List<NodeJobBatches.Planned> planned = new ArrayList<>();
          for (NodeJobBatches.Planned p = node.plan(); p != null; p = node.plan()) {
            planned.add(p);
          }
          List<java.util.concurrent.Future<Map<Long, Part>>> gathered = new ArrayList<>();
          for (int i = planned.size() - 1; i >= 0; i--) {
            NodeJobBatches.Planned p = planned.get(i);
            gathered.add(threads.submit(() -> parts(p)));
          }
          Map<Long, Part> stream = new java.util.TreeMap<>();
          for (java.util.concurrent.Future<Map<Long, Part>> part : gathered) {
            stream.putAll(part.get());
          }
          streams.add(stream);
        }
      }
      for (long k = 0; k < shape.batches(); k++) {
        assertSameRows(assembled(streams, k, share.rowsPerBatch()), expected(share, k));
      }
    } finally {
      threads.shutdown();
    }
  }

  /** One planned record batch, gathered here, cut into its batches' parts. */
  private static Map<Long, Part> parts(NodeJobBatches.Planned planned) {
    Map<Long, Part> parts = new LinkedHashMap<>();
    try (VectorSchemaRoot batch = planned.rows()) {
      JobBatchMetadata metadata = planned.metadata();
      assertThat(metadata.totalRows()).isEqualTo(batch.getRowCount()).isPositive();
      List<Record> rows = ArrowRecords.read(batch, TestRows.ALL_TYPES);
      int from = 0;
      for (int i = 0; i < metadata.batchCount(); i++) {
        parts.put(
            metadata.batch(i),
            new Part(rows.subList(from, from + metadata.rows(i)), metadata.places(i)));
        from += metadata.rows(i);
      }
    }
    return parts;
  }

  /**
   * An ordered job read by one rank from one node: a record batch of several global batches whose
   * rows are one run of one source batch is served by reference; a global batch across two source
   * batches starts a record batch of its own. So most rows go by reference, in fewer record batches
   * than global batches.
   */
  @ParameterizedTest
  @CsvSource({"16", "32", "50"})
  void anOrderedJobsRecordBatchesAreRunsServedByReference(int batchRows) {
    long rows = Arrays.stream(SLICE_ROWS).sum();
    EpochShape shape = new EpochShape(rows, batchRows, TailPolicy.PAD);
    EpochOrder order = new EpochOrder(SLICE_ROWS, ORDERED, 0);
    RankShare share = new RankShare(shape, order, 1, 0);
    int[] localOf = new int[slices.size()];
    List<LoadedSlice.Lease> leases = new ArrayList<>();
    for (int s = 0; s < slices.size(); s++) {
      leases.add(slices.get(s).acquire().orElseThrow());
      localOf[s] = s;
    }
    JobRead read =
        new JobRead("layout", 0, ORDERED, batchRows, TailPolicy.PAD, 1, 0, 0, shape.batches(), 1);
    int messages = 0;
    long byReference = 0;
    long served = 0;
    try (NodeJobBatches node =
        new NodeJobBatches(leases, localOf, read, share, schema, 64, stagings)) {
      for (NodeJobBatches.Planned planned = node.plan(); planned != null; planned = node.plan()) {
        try (VectorSchemaRoot batch = planned.rows()) {
          messages++;
          served += batch.getRowCount();
          if (planned.metadata().batchCount() > 1 && sharesSourceMemory(batch)) {
            byReference += batch.getRowCount();
          }
        }
      }
    }
    assertThat(served).isEqualTo(shape.batches() * batchRows);
    assertThat(byReference).as("rows by reference of %s", served).isGreaterThan(served / 2);
    assertThat(messages).isLessThan((int) shape.batches() / 2);
  }

  /** Whether the first column's values are a view of a slice's own buffers (not a copy). */
  private boolean sharesSourceMemory(VectorSchemaRoot batch) {
    long address = batch.getVector(0).getDataBuffer().memoryAddress();
    for (LoadedSlice slice : slices) {
      for (ArrowRecordBatch source : slice.batches()) {
        for (org.apache.arrow.memory.ArrowBuf buffer : source.getBuffers()) {
          long start = buffer.memoryAddress();
          if (start <= address && address < start + buffer.capacity()) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private NodeJobBatches node(
      int holder,
      int epoch,
      OrderSettings settings,
      int world,
      int rank,
      TailPolicy tail,
      long batches,
      RankShare share,
      int perMessage) {
    int[] localOf = new int[slices.size()];
    List<LoadedSlice.Lease> leases = new ArrayList<>();
    for (int s = 0; s < slices.size(); s++) {
      localOf[s] = -1;
      if (holderOf(s) == holder) {
        leases.add(slices.get(s).acquire().orElseThrow());
        localOf[s] = leases.size() - 1;
      }
    }
    JobRead read =
        new JobRead("layout", epoch, settings, BATCH_ROWS, tail, world, rank, 0, batches, 1);
    return new NodeJobBatches(leases, localOf, read, share, schema, perMessage, stagings);
  }

  /** One batch's part as a node sent it: its rows and their places (null: the whole share). */
  private record Part(List<Record> rows, int[] places) {}

  /**
   * A node's stream cut into its batches' parts by the record batches' metadata, checking that
   * batches come in order, each once, at most {@code perMessage} to a record batch and none empty.
   */
  private static Map<Long, Part> parts(NodeJobBatches node, int perMessage) {
    Map<Long, Part> parts = new LinkedHashMap<>();
    long last = -1;
    for (NodeJobBatches.Planned planned = node.plan(); planned != null; planned = node.plan()) {
      assertThat(planned.metadata().batchCount()).isBetween(1, perMessage);
      for (Map.Entry<Long, Part> part : parts(planned).entrySet()) {
        long k = part.getKey();
        assertThat(k).as("batch after batch %s", last).isGreaterThan(last);
        assertThat(part.getValue().rows()).as("rows of batch %s", k).isNotEmpty();
        last = k;
        parts.put(k, part.getValue());
      }
    }
    return parts;
  }

  /** The share as a reader puts it together: each node's rows at the places they carry. */
  private static List<Record> assembled(List<Map<Long, Part>> streams, long k, int size) {
    Record[] share = new Record[size];
    int parts = 0;
    for (Map<Long, Part> stream : streams) {
      Part part = stream.get(k);
      if (part == null) {
        continue;
      }
      parts++;
      for (int j = 0; j < part.rows().size(); j++) {
        int place = part.places() == null ? j : part.places()[j];
        assertThat(share[place]).as("place %s of batch %s filled twice", place, k).isNull();
        share[place] = part.rows().get(j);
      }
    }
    assertThat(parts).isPositive();
    assertThat(share).as("every place of batch %s", k).doesNotContainNull();
    return Arrays.asList(share);
  }

  /** The share the epoch order defines, from the records the slices were built from. */
  private List<Record> expected(RankShare share, long k) {
    int[] slice = new int[share.rowsPerBatch()];
    long[] row = new long[share.rowsPerBatch()];
    share.locate(k, slice, row);
    List<Record> expected = new ArrayList<>(slice.length);
    for (int i = 0; i < slice.length; i++) {
      expected.add(sliceRecords.get(slice[i]).get((int) row[i]));
    }
    return expected;
  }
}
