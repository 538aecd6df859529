package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * A test node on 127.0.0.1 and a client of it, for test classes that share one node. Closing it
 * checks that everything the client allocated was released.
 */
final class ClientNode implements AutoCloseable {
  private final FloeNode node;
  private final BufferAllocator allocator;
  private final FloeClient client;

  private ClientNode(FloeNode node) {
    this.node = node;
    this.allocator = new RootAllocator();
    this.client = FloeClient.connect(allocator, node.location());
  }

  static ClientNode start() {
    return new ClientNode(TestNodes.start());
  }

  /**
   * A node serving dataset {@code name}, loaded until READY from an events table that this writes
   * under {@code dir}: {@code files} files of {@code rowsPerFile} rows from generator seed {@code
   * seed}, cut into Arrow batches of {@code batchRows} rows.
   */
  static ClientNode servingEvents(
      Path dir, String name, int files, int rowsPerFile, long seed, int batchRows) {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create(name, TestRows.EVENTS)
            .appendFiles(files, rowsPerFile, TestRows.events(seed));
    ClientNode serving = start();
    DatasetStatusReply status =
        serving.client.load(
            new LoadRequest(
                DatasetSpec.of(name, table.metadataLocation()).withBatchRows(batchRows), true));
    assertThat(status.state()).as(status.toString()).isEqualTo(DatasetStatusReply.State.READY);
    return serving;
  }

  /** With configuration overrides, as {@link TestNodes#start(String)} takes them. */
  static ClientNode start(String overrides) {
    return new ClientNode(TestNodes.start(overrides));
  }

  FloeClient client() {
    return client;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  Location location() {
    return node.location();
  }

  @Override
  public void close() throws Exception {
    client.close();
    assertThat(allocator.getAllocatedMemory()).as(allocator.toVerboseString()).isZero();
    allocator.close();
    node.close();
  }
}
