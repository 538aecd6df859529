package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
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
