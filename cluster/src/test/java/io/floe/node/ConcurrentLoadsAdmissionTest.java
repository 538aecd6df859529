package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.iceberg.MemoryNeed;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SlicePlanner;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Loads started together on a node with a memory limit: each needs what its slices hold once loaded
 * plus what its slices decoding at once take ({@link MemoryNeed}); those that fit one after another
 * end READY and the others are refused MEMORY_EXHAUSTED with what they need and what is free, in
 * bytes, every run, rather than all racing for the memory and failing half-way. And a load that
 * just fits in that formula is not refused.
 */
class ConcurrentLoadsAdmissionTest {
  /** The columns whose size the table's metadata bounds exactly: no strings. */
  private static final List<String> FIXED_WIDTH = List.of("id", "user_id", "amount", "event_time");

  private static final int LOADS = 4;

  private static final long SLICE_TARGET = 256 << 10;

  @TempDir Path dir;

  private String table() {
    // Row groups of 16 KiB, 5 slices of 256 KiB: what a load decodes holds its rows more than once.
    return IcebergTestTables.in(dir)
        .create("events", TestRows.EVENTS)
        .appendFiles(2, 20_000, TestRows.events(5))
        .metadataLocation();
  }

  private static DatasetSpec spec(String name, String table) {
    return DatasetSpec.of(name, table).withColumns(FIXED_WIDTH);
  }

  /**
   * The least a test node reserves for a load of {@code table}: planned as it plans, with one slice
   * decoding at a time (it admits up to 2: 4 per dataset, at most its 2 load threads, as many as
   * fit).
   */
  private static MemoryNeed need(String table) {
    try (TableAccess tables = new TableAccess(StorageSettings.defaults())) {
      DatasetSpec spec = spec("probe", table);
      TableSource source = tables.resolve(spec.table(), spec.catalog());
      ScanPlan plan = new SlicePlanner(SLICE_TARGET).plan(source, tables.open(source), spec, 1);
      return MemoryNeed.of(plan, 2).withSlicesAtOnce(1);
    }
  }

  @ParameterizedTest(name = "{0} of 4 fit")
  @ValueSource(ints = {1, 2})
  void ofLoadsStartedTogetherThoseThatFitAreReadyAndTheOthersRefusedWithTheFigures(int fit)
      throws Exception {
    String table = table();
    MemoryNeed need = need(table);
    // k loads fit one after another when (k - 1) loaded ones and the k-th's least need fit:
    // halfway between that and one more loaded. (A slice decoding takes more than half a load's
    // bytes here, so no load is admitted with 2 slices at once.)
    assertThat(need.perSliceDecoding()).isGreaterThan(2 * need.bytes());
    long limit = need.total() + (fit - 1) * need.bytes() + need.bytes() / 2;
    try (FloeNode node =
            TestNodes.start(
                "floe.load.slice-target-size = 256KiB\nfloe.memory.limit = " + limit + "\n");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      List<CompletableFuture<DatasetStatusReply>> loads = new ArrayList<>();
      for (int i = 0; i < LOADS; i++) {
        DatasetSpec spec = spec("d" + i, table);
        loads.add(CompletableFuture.supplyAsync(() -> client.load(new LoadRequest(spec, true))));
      }

      List<String> ready = new ArrayList<>();
      List<FlightRuntimeException> refused = new ArrayList<>();
      for (int i = 0; i < LOADS; i++) {
        try {
          DatasetStatusReply status = loads.get(i).join();
          assertThat(status.state()).isEqualTo(State.READY);
          ready.add(status.name());
        } catch (CompletionException e) {
          assertThat(e.getCause()).isInstanceOf(FlightRuntimeException.class);
          refused.add((FlightRuntimeException) e.getCause());
        }
      }

      assertThat(ready).hasSize(fit);
      assertThat(refused).hasSize(LOADS - fit);
      for (FlightRuntimeException e : refused) {
        assertThat(ErrorCode.of(e)).contains(ErrorCode.MEMORY_EXHAUSTED);
        assertThat(e.status().description())
            .contains(String.format("(%,d bytes) of Arrow memory", need.total()))
            .contains(String.format("%,d rows", need.rows()))
            .containsPattern("has [0-9.]+ [KM]iB \\([0-9,]+ bytes\\) free");
      }
      for (int i = 0; i < LOADS; i++) {
        DatasetStatusReply status = client.status("d" + i);
        if (!ready.contains("d" + i)) {
          assertThat(status.state()).isEqualTo(State.FAILED);
          assertThat(status.error().kind()).isEqualTo("RESOURCE_EXHAUSTED");
          assertThat(status.error().message())
              .contains(String.format("(%,d bytes) of Arrow memory", need.total()));
        }
      }
      for (String name : ready) {
        assertThat(client.read(client.plan(name, 0, 1), root -> {})).isEqualTo(40_000);
      }

      for (int i = 0; i < LOADS; i++) {
        client.drop("d" + i);
      }
      Awaitility.await()
          .untilAsserted(
              () -> assertThat(node.resources().allocator().getAllocatedMemory()).isZero());
    }
  }

  @Test
  void aLoadThatFitsTheFormulaExactlyIsNotRefused() throws Exception {
    String table = table();
    MemoryNeed need = need(table);
    try (FloeNode node =
            TestNodes.start(
                "floe.load.slice-target-size = 256KiB\nfloe.memory.limit = "
                    + need.total()
                    + "\n");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      DatasetStatusReply status = client.load(new LoadRequest(spec("exact", table), true));

      assertThat(status.state()).isEqualTo(State.READY);
      assertThat(client.read(client.plan("exact", 0, 1), root -> {})).isEqualTo(40_000);
      client.drop("exact");
      Awaitility.await()
          .untilAsserted(
              () -> assertThat(node.resources().allocator().getAllocatedMemory()).isZero());
    }
  }
}
