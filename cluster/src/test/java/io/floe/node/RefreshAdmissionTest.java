package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.iceberg.MemoryNeed;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SlicePlanner;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.RefreshReply;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A refresh is admitted like a load: its new slices, and their decoding, must fit in the free
 * memory beside the layout it replaces. One that does not is refused before any slice loads, with
 * what it needs and what is free, and the dataset serves its snapshot on, holding what it held.
 */
class RefreshAdmissionTest {
  /** The columns whose size the table's metadata bounds exactly: no strings. */
  private static final List<String> FIXED_WIDTH = List.of("id", "user_id", "amount", "event_time");

  private static final long SLICE_TARGET = 256 << 10;

  @TempDir Path dir;

  private static DatasetSpec spec(String table) {
    return DatasetSpec.of("growing", table).withColumns(FIXED_WIDTH);
  }

  /** What a test node reserves for a load of {@code table} as it stands, one slice at a time. */
  private static MemoryNeed need(String table) {
    try (TableAccess tables = new TableAccess(StorageSettings.defaults())) {
      DatasetSpec spec = spec(table);
      TableSource source = tables.resolve(spec.table(), spec.catalog());
      ScanPlan plan = new SlicePlanner(SLICE_TARGET).plan(source, tables.open(source), spec, 1);
      return MemoryNeed.of(plan, 2).withSlicesAtOnce(1);
    }
  }

  @Test
  void aRefreshThatDoesNotFitIsRefusedWithTheFiguresAndTheDatasetServesOn() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 20_000, TestRows.events(5));
    String location = table.location();
    MemoryNeed first = need(location);
    // The first load fits with half a load to spare; the append triples the rows.
    long limit = first.total() + first.bytes() / 2;
    try (FloeNode node =
            TestNodes.start(
                "floe.load.slice-target-size = 256KiB\nfloe.memory.limit = " + limit + "\n");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      DatasetStatusReply loaded = client.load(new LoadRequest(spec(location), true));
      assertThat(loaded.state()).as(loaded.toString()).isEqualTo(State.READY);
      long snapshot = loaded.snapshotId();
      long held = node.resources().allocator().getAllocatedMemory();

      table.appendFiles(4, 20_000, TestRows.events(6));
      assertThatThrownBy(() -> client.refresh("growing", true))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> {
                assertThat(ErrorCode.of(e)).contains(ErrorCode.MEMORY_EXHAUSTED);
                assertThat(e.getMessage())
                    .contains("it still serves snapshot " + snapshot)
                    .contains("Dataset 'growing' needs at least");
              });

      DatasetStatusReply refreshed = client.status("growing");
      RefreshReply report = refreshed.refresh();
      assertThat(report.state()).as(refreshed.toString()).isEqualTo("FAILED");
      assertThat(report.slicesLoaded()).isZero();
      assertThat(report.error().kind()).isEqualTo("RESOURCE_EXHAUSTED");
      assertThat(report.error().message())
          .contains("of Arrow memory to load")
          .containsPattern("has [0-9.]+ [KM]iB \\([0-9,]+ bytes\\) free");
      assertThat(refreshed.state()).isEqualTo(State.READY);
      assertThat(refreshed.snapshotId()).isEqualTo(snapshot);
      assertThat(client.read(client.plan("growing", 0, 1), root -> {})).isEqualTo(40_000);
      // No slice of the new snapshot was loaded, so none had anything to give back.
      assertThat(node.resources().allocator().getAllocatedMemory()).isEqualTo(held);

      client.drop("growing");
      Awaitility.await()
          .untilAsserted(
              () -> assertThat(node.resources().allocator().getAllocatedMemory()).isZero());
    }
  }
}
