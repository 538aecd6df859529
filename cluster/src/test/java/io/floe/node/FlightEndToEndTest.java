package io.floe.node;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.ArrowRecords;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** A real node and a real Flight client on 127.0.0.1: load, plan shards, stream, drop. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FlightEndToEndTest {
  private FloeNode node;
  private BufferAllocator clientAllocator;
  private FloeClient client;
  private IcebergTestTables.TestTable table;

  @BeforeAll
  void start(@TempDir Path dir) {
    table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(3, 1_000, TestRows.allTypes(21))
            .deletePositions(r -> (Long) r.getField("id") % 10 == 3);
    node = TestNodes.start();
    clientAllocator = new RootAllocator();
    client = FloeClient.connect(clientAllocator, node.location());
  }

  @AfterAll
  void stop() throws Exception {
    client.close();
    assertThat(clientAllocator.getAllocatedMemory()).isZero();
    clientAllocator.close();
    node.close();
  }

  @Test
  void shardsOfAnyCountCoverEveryRowOnceWithTheTableContents() {
    DatasetStatusReply status =
        client.load(
            new LoadRequest(
                DatasetSpec.of("e2e", table.metadataLocation()).withBatchRows(100), true));
    assertThat(status.state()).isEqualTo(State.READY);
    List<Record> expected = sortedById(readAllGeneric(table.table()));
    assertThat(status.rows()).isEqualTo(expected.size());

    for (int shards : new int[] {1, 2, 3, 7}) {
      List<Record> all = new ArrayList<>();
      long[] sizes = new long[shards];
      for (int shard = 0; shard < shards; shard++) {
        FlightInfo info = client.plan("e2e", shard, shards);
        List<Record> rows = new ArrayList<>();
        client.read(info, root -> rows.addAll(ArrowRecords.read(root, TestRows.ALL_TYPES)));
        assertThat(info.getRecords()).isEqualTo(rows.size());
        sizes[shard] = rows.size();
        all.addAll(rows);
      }
      assertThat(
              java.util.Arrays.stream(sizes).max().getAsLong()
                  - java.util.Arrays.stream(sizes).min().getAsLong())
          .as("shard sizes differ by at most one row for %d shards", shards)
          .isLessThanOrEqualTo(1);
      Set<Object> ids = new HashSet<>();
      all.forEach(r -> ids.add(r.getField("id")));
      assertThat(ids).as("distinct ids over %d shards", shards).hasSize(all.size());
      assertSameRows(sortedById(all), expected);
    }

    assertThat(client.list()).extracting(DatasetStatusReply::name).contains("e2e");
    DatasetStatusReply dropped = client.drop("e2e");
    assertThat(dropped.dropped()).isTrue();
    org.awaitility.Awaitility.await()
        .untilAsserted(
            () ->
                assertThat(node.resources().allocator().getAllocatedMemory())
                    .as(node.resources().allocator().toVerboseString())
                    .isZero());
  }
}
