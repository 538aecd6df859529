package io.floe.node;

import static io.floe.node.JobReads.flatten;
import static io.floe.node.JobReads.globalOrder;
import static io.floe.node.JobReads.readGlobal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.RefreshReply;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dataset refreshed after its table changed (append, position and equality deletes, a partition
 * overwritten) serves exactly what a fresh load of the new snapshot serves, in the same order,
 * having loaded only the slices that changed; a job reading across the refresh finishes its epoch
 * on the old layout and reads the new one from its next epoch, a pinned job stays, and the old
 * layout is freed once no job reads it.
 */
class IncrementalRefreshTest {
  @TempDir Path dir;

  private static DatasetStatusReply load(
      FloeClient client, String name, String table, boolean latest) {
    DatasetStatusReply status =
        client.load(new LoadRequest(DatasetSpec.of(name, table).withBatchRows(500), true, latest));
    assertThat(status.state()).as(status.toString()).isEqualTo(State.READY);
    return status;
  }

  /** The new snapshot's rows, in the global order a fresh load gives them. */
  private static List<Long> freshOrder(FloeClient client, String table, String name) {
    load(client, name, table, false);
    try {
      return globalOrder(client, name);
    } finally {
      client.drop(name);
    }
  }

  private static List<Long> ids(List<Record> records) {
    return records.stream().map(r -> (Long) r.getField("id")).sorted().collect(Collectors.toList());
  }

  @Test
  void refreshLoadsOnlyWhatChangedAndServesWhatAFreshLoadServes() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("grow", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
            .appendFiles(2, 1_200, TestRows.events(1))
            .appendFiles(2, 1_200, TestRows.events(1));
    try (ClientNode node = ClientNode.start()) {
      FloeClient client = node.client();
      DatasetStatusReply first = load(client, "grow", table.location(), false);
      int slicesBefore = first.slicesTotal();

      // An append, and position deletes in the second commit's files only.
      table
          .appendFiles(1, 900, TestRows.events(1))
          .deletePositions(
              r -> {
                long id = (Long) r.getField("id");
                return id >= 2_400 && id < 4_800 && id % 7 == 0;
              });
      DatasetStatusReply refreshed = client.refresh("grow", true);
      RefreshReply report = refreshed.refresh();
      assertThat(report.state()).as(refreshed.toString()).isEqualTo("DONE");
      assertThat(report.toSnapshot()).isEqualTo(table.snapshotId());
      int kept = report.slicesKept();
      int loaded = report.slicesLoaded();
      assertThat(kept).as("the first commit's slices stay loaded: %s", refreshed).isPositive();
      assertThat(loaded).as("the changed and new slices load").isPositive();
      assertThat(kept + loaded).isEqualTo(refreshed.slicesTotal());
      assertThat(report.slicesFreed()).isEqualTo(slicesBefore - kept);
      assertThat(refreshed.snapshotId()).isEqualTo(table.snapshotId());
      assertThat(globalOrder(client, "grow"))
          .isEqualTo(freshOrder(client, table.location(), "fresh1"))
          .containsExactlyInAnyOrderElementsOf(
              ids(IcebergTestTables.readAllGeneric(table.table())));

      // Equality deletes, then one partition overwritten with new rows.
      table.deleteEqual("category", "games");
      DatasetStatusReply afterDeletes = client.refresh("grow", true);
      assertThat(afterDeletes.refresh().state()).isEqualTo("DONE");
      assertThat(globalOrder(client, "grow"))
          .isEqualTo(freshOrder(client, table.location(), "fresh2"));
      List<Record> replacement = new ArrayList<>();
      for (Record row : table.nextRows(400, TestRows.events(9))) {
        row.setField("category", "books");
        row.setField("event_time", TestRows.EVENTS_START.plusHours(1));
        replacement.add(row);
      }
      table.replacePartitions(replacement);
      // A load of the newest snapshot under the same name refreshes, as refresh does.
      DatasetStatusReply afterOverwrite = load(client, "grow", table.location(), true);
      assertThat(afterOverwrite.refresh().state()).isEqualTo("DONE");
      assertThat(afterOverwrite.refresh().slicesKept()).isPositive();
      assertThat(globalOrder(client, "grow"))
          .isEqualTo(freshOrder(client, table.location(), "fresh3"))
          .containsExactlyInAnyOrderElementsOf(
              ids(IcebergTestTables.readAllGeneric(table.table())));

      DatasetStatusReply unchanged = client.refresh("grow", true);
      assertThat(unchanged.refresh().state()).isEqualTo("UNCHANGED");
      client.drop("grow");
    }
  }

  @Test
  void jobsFinishTheirEpochOnTheOldLayoutAndMoveAtTheNext() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("jobs", TestRows.EVENTS)
            .appendFiles(3, 1_000, TestRows.events(4));
    try (ClientNode node = ClientNode.start()) {
      FloeClient client = node.client();
      load(client, "jobs", table.location(), false);
      JobOptions follow = JobOptions.builder("follow", "jobs", 600).seed(3).build();
      JobOptions pinned = JobOptions.builder("pinned", "jobs", 600).seed(3).pinLayout().build();
      client.registerJob(follow);
      client.registerJob(pinned);

      // Two batches of epoch 0, then the table grows and the dataset is refreshed.
      List<List<Long>> epoch0 = new ArrayList<>(readGlobal(client, follow, 0, 2, 0, 2));
      table.appendFiles(1, 1_200, TestRows.events(4));
      assertThat(client.refresh("jobs", true).refresh().state()).isEqualTo("DONE");

      // Epoch 0 ends on the layout it began on: the first 3,000 rows, each once.
      epoch0.addAll(readGlobal(client, follow, 0, 2, 2, -1));
      assertThat(flatten(epoch0))
          .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 3_000).boxed().toList());
      // Epoch 1 begins on the new layout: all 4,200 rows, each once.
      assertThat(flatten(readGlobal(client, follow, 1, 2, 0, -1)))
          .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 4_200).boxed().toList());
      // The pinned job keeps reading the layout it was registered on.
      assertThat(flatten(readGlobal(client, pinned, 1, 3, 0, -1)))
          .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 3_000).boxed().toList());
      assertThat(client.jobStatus("follow", 1).layout())
          .isNotEqualTo(client.jobStatus("follow", 0).layout());

      // Once the follower begins epoch 2, only the pinned job holds the old layout.
      client.jobStatus("follow", 2);
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                List<DatasetStatusReply.RetainedLayout> retained =
                    client.status("jobs").retainedLayouts();
                assertThat(retained).hasSize(1);
                assertThat(retained.get(0).heldBy()).containsExactly("pinned");
              });
      client.dropJob("pinned");
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(client.status("jobs").retainedLayouts()).isEmpty());
      client.dropJob("follow");
      client.drop("jobs");
    }
  }
}
