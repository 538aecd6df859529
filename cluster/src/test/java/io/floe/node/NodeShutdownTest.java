package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Shutting a node down with datasets loaded returns every byte to its root allocator. */
class NodeShutdownTest {
  @TempDir Path dir;

  @Test
  void shutdownFreesAllSliceMemory() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(3, 2_000, TestRows.events(8));
    FloeNode node = TestNodes.start();
    try (BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      client.load(new LoadRequest(DatasetSpec.of("a", table.metadataLocation()), true));
      client.load(
          new LoadRequest(
              DatasetSpec.of("b", table.metadataLocation()).withFilter("amount < 500"), true));
      assertThat(client.read(client.plan("a", 0, 2), root -> {})).isPositive();
      assertThat(node.resources().allocator().getAllocatedMemory()).isPositive();
      assertThat(node.resources().sliceStore().size()).isPositive();
    }

    node.close(); // closes the root allocator, which throws if anything leaked

    assertThat(node.whenClosed()).isCompleted();
    assertThat(node.resources().allocator().getAllocatedMemory()).isZero();
    assertThat(node.resources().sliceStore().size()).isZero();
  }
}
