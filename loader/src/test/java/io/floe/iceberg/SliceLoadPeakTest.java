package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.arrow.NodeAllocation;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a slice holds at its peak while it decodes, beyond what it keeps, stays within what {@link
 * MemoryNeed} reserves for it, with every decoder, on files of small row groups (their batches are
 * joined) and of large ones, in slices of a few row groups and of whole files. Each slice loads
 * alone under a node allocator of its own, whose peak is the slice's. Prints the figures (docs:
 * README, "Memory sizing").
 */
class SliceLoadPeakTest {
  /** The columns whose size the table's metadata bounds exactly: no strings. */
  private static final List<String> FIXED_WIDTH = List.of("id", "user_id", "amount", "event_time");

  @TempDir Path dir;
  private TableAccess tables;
  private AllocatorReaper reaper;

  @BeforeEach
  void setUp() {
    tables = new TableAccess(StorageSettings.defaults());
    reaper = new AllocatorReaper();
  }

  @AfterEach
  void tearDown() {
    reaper.close();
    tables.close();
  }

  @ParameterizedTest
  @EnumSource(SliceLoader.Decoders.class)
  void aDecodingSliceHoldsAtMostWhatTheAdmissionReservesForIt(SliceLoader.Decoders decoders) {
    IcebergTestTables.TestTable smallGroups =
        IcebergTestTables.in(dir)
            .create("small_groups", TestRows.EVENTS)
            .appendFiles(2, 40_000, TestRows.events(3));
    IcebergTestTables.TestTable largeGroups =
        IcebergTestTables.in(dir)
            .rowGroupBytes(8L << 20)
            .create("large_groups", TestRows.EVENTS)
            .appendFiles(2, 40_000, TestRows.events(3));
    for (IcebergTestTables.TestTable table : List.of(smallGroups, largeGroups)) {
      for (long sliceTarget : new long[] {256L << 10, 1L << 30}) {
        DatasetSpec spec = DatasetSpec.of("t", table.metadataLocation()).withColumns(FIXED_WIDTH);
        TableSource source = tables.resolve(spec.table(), spec.catalog());
        ScanPlan plan = new SlicePlanner(sliceTarget).plan(source, tables.open(source), spec, 1);
        MemoryNeed need = MemoryNeed.of(plan, 1);
        long held = 0;
        long peakBeyond = 0;
        for (SliceSpec slice : plan.slices()) {
          try (BufferAllocator node = NodeAllocation.root(1L << 32)) {
            LoadedSlice loaded = new SliceLoader(node, tables, reaper, decoders).load(slice);
            long kept = node.getAllocatedMemory();
            held += kept;
            peakBeyond = Math.max(peakBeyond, node.getPeakMemoryAllocation() - kept);
            loaded.release();
            assertThat(reaper.awaitDrained(Duration.ofSeconds(30))).isTrue();
          }
        }
        System.out.printf(
            "%s, %s decoders, slice target %,d: %d slices holding %,d bytes (floor %,d); a"
                + " decoding slice's peak beyond what it keeps %,d bytes, reserved %,d%n",
            table.location().replaceAll(".*/", ""),
            decoders,
            sliceTarget,
            plan.slices().size(),
            held,
            need.bytes(),
            peakBeyond,
            need.perSliceDecoding());
        assertThat(peakBeyond).isLessThanOrEqualTo(need.perSliceDecoding());
        // The floor is what the slices hold, up to the pages their buffers are rounded to.
        assertThat(held).isBetween(need.bytes(), need.bytes() + plan.slices().size() * 8192L);
      }
    }
  }
}
