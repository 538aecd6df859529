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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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

  /** Slice s is on node s % 2: both nodes hold rows of most batches, in turn within them. */
  private static int holderOf(int slice) {
    return slice % 2;
  }

  /**
   * Shuffled parts are gathered row by row, parts of a job shuffled in units as runs; an ordered
   * job's parts are mostly one run of one source batch, served by reference (Arrow's split), the
   * rest gathered in runs.
   */
  @ParameterizedTest
  @CsvSource({
    "DROP, SHUFFLED",
    "PAD, SHUFFLED",
    "DROP, ORDERED",
    "PAD, ORDERED",
    "DROP, UNITS",
    "PAD, UNITS"
  })
  void partsPutTogetherByTheirPlacesAreTheRanksShareAtEveryWorldSize(TailPolicy tail, String kind) {
    OrderSettings settings =
        switch (kind) {
          case "SHUFFLED" -> SHUFFLED;
          case "ORDERED" -> ORDERED;
          default -> UNITS;
        };
    long rows = Arrays.stream(SLICE_ROWS).sum();
    EpochShape shape = new EpochShape(rows, BATCH_ROWS, tail);
    for (int epoch = 0; epoch < 2; epoch++) {
      EpochOrder order = new EpochOrder(SLICE_ROWS, settings, epoch);
      for (int world = 1; world <= 8; world++) {
        for (int rank = 0; rank < world; rank++) {
          RankShare share = new RankShare(shape, order, world, rank);
          List<NodeJobBatches> nodes = new ArrayList<>();
          for (int h = 0; h < HOLDERS.length; h++) {
            nodes.add(node(h, epoch, settings, world, rank, tail, shape.batches(), share));
          }
          try {
            for (long k = 0; k < shape.batches(); k++) {
              assertSameRows(assembled(nodes, k, share.rowsPerBatch()), expected(share, k));
            }
          } finally {
            nodes.forEach(NodeJobBatches::close);
          }
        }
      }
    }
  }

  private NodeJobBatches node(
      int holder,
      int epoch,
      OrderSettings settings,
      int world,
      int rank,
      TailPolicy tail,
      long batches,
      RankShare share) {
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
    return new NodeJobBatches(leases, localOf, read, share, schema);
  }

  /** The share as a reader puts it together: each node's rows at the places they carry. */
  private static List<Record> assembled(List<NodeJobBatches> nodes, long k, int size) {
    Record[] share = new Record[size];
    int parts = 0;
    for (NodeJobBatches node : nodes) {
      NodeJobBatches.Part part = node.part(k);
      if (part == null) {
        continue;
      }
      parts++;
      try (VectorSchemaRoot gathered = part.rows()) {
        List<Record> rows = ArrowRecords.read(gathered, TestRows.ALL_TYPES);
        assertThat(rows).isNotEmpty();
        for (int j = 0; j < rows.size(); j++) {
          int place = part.places() == null ? j : part.places()[j];
          assertThat(share[place]).as("place %s of batch %s filled twice", place, k).isNull();
          share[place] = rows.get(j);
        }
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
