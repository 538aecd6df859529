package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.store.AllocatorTree;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers that take one batch of each slice and then neither read, cancel nor disconnect do not
 * keep a dropped dataset's memory: with the default stream buffer and stall timeout (5 minutes,
 * which never comes into it), the node's Arrow memory is back to what it was before the load within
 * seconds of the drop, a load that needs that memory succeeds, and the node goes on serving other
 * readers. Real Flight Java clients over 127.0.0.1 against a real node.
 */
@Timeout(180)
class DroppedUnderStoppedReadersTest {
  @TempDir Path dir;

  @Test
  void aDroppedDatasetsMemoryComesBackWhileItsReadersHoldTheirStreams() throws Exception {
    IcebergTestTables.TestTable big =
        IcebergTestTables.in(dir)
            .create("big", TestRows.EVENTS)
            .appendFiles(4, 400_000, TestRows.events(3));
    IcebergTestTables.TestTable small =
        IcebergTestTables.in(dir)
            .create("small", TestRows.EVENTS)
            .appendFiles(1, 1_000, TestRows.events(5));
    // Room for one copy of "big" and "small", not for two copies of "big".
    try (FloeNode node =
            TestNodes.start(
                "floe.memory.limit = 4GiB\nfloe.load.slice-target-size = 4MiB\n"
                    + "floe.gateway.stall-timeout = 5m");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      BufferAllocator nodeMemory = node.resources().allocator();
      client.load(new LoadRequest(DatasetSpec.of("small", small.metadataLocation()), true));
      long baseline = nodeMemory.getAllocatedMemory();
      client.load(new LoadRequest(DatasetSpec.of("big", big.metadataLocation()), true));
      long loaded = nodeMemory.getAllocatedMemory() - baseline;

      FlightInfo plan = client.plan("big", 0, 1);
      List<FlightClient> readers = new ArrayList<>();
      List<FlightStream> stopped = new ArrayList<>();
      try {
        for (FlightEndpoint endpoint : plan.getEndpoints()) {
          FlightClient reader = FlightClient.builder(allocator, node.location()).build();
          readers.add(reader);
          FlightStream stream = reader.getStream(endpoint.getTicket());
          assertThat(stream.next()).isTrue(); // one batch, then nothing
          stopped.add(stream);
        }

        client.drop("big");
        long droppedAt = System.nanoTime();
        Awaitility.await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .untilAsserted(
                () ->
                    assertThat(nodeMemory.getAllocatedMemory())
                        .as(AllocatorTree.describe(nodeMemory))
                        .isEqualTo(baseline));
        System.out.printf(
            "%d readers stopped on %d slices: %.1f MiB loaded, back to the baseline %.1f s after"
                + " the drop%n",
            stopped.size(),
            plan.getEndpoints().size(),
            loaded / 1048576.0,
            (System.nanoTime() - droppedAt) / 1e9);

        // The node goes on: another reader reads in full, and a load that needs the memory the
        // dropped dataset held succeeds.
        assertThat(client.read(client.plan("small", 0, 1), root -> {})).isEqualTo(1_000);
        assertThat(
                client
                    .load(new LoadRequest(DatasetSpec.of("again", big.metadataLocation()), true))
                    .state())
            .isEqualTo(State.READY);
        assertThat(client.read(client.plan("again", 0, 1), root -> {})).isEqualTo(1_600_000);

        // The stopped readers' streams were ended by the node (a slice small enough to have
        // reached its reader whole before the drop ends normally), and they did not go on to
        // receive the dropped dataset's rows.
        long rowsAfterTheDrop = 0;
        int ended = 0;
        for (FlightStream stream : stopped) {
          try {
            while (stream.next()) {
              rowsAfterTheDrop += stream.getRoot().getRowCount();
            }
          } catch (org.apache.arrow.flight.FlightRuntimeException e) {
            ended++;
          }
        }
        assertThat(ended).isPositive();
        assertThat(rowsAfterTheDrop).isLessThan(1_600_000);
      } finally {
        for (FlightStream stream : stopped) {
          try {
            stream.close();
          } catch (Exception e) {
            // ended by the node
          }
        }
        for (FlightClient reader : readers) {
          reader.close();
        }
      }
    }
  }
}
