package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node confined to one directory loads the tables under it and refuses any other location, also
 * one that climbs out with '..', as PERMISSION_DENIED before reading anything.
 */
class ConfinedLoadsTest {
  @Test
  void onlyAllowedLocationsLoad(@TempDir Path dir) throws Exception {
    Path allowed = dir.resolve("allowed");
    Path outside = dir.resolve("outside");
    IcebergTestTables.TestTable inside =
        IcebergTestTables.in(allowed)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 100, TestRows.events(1));
    IcebergTestTables.TestTable other =
        IcebergTestTables.in(outside)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 100, TestRows.events(1));
    try (FloeNode node =
            TestNodes.start("floe.security.allowed-locations = \"" + allowed + "/\"\n");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      assertThat(
              client
                  .load(new LoadRequest(DatasetSpec.of("in", inside.metadataLocation()), true))
                  .state())
          .isEqualTo(State.READY);
      String climbing = allowed + "/../outside/events";
      for (String location : new String[] {other.metadataLocation(), climbing}) {
        assertThatThrownBy(
                () -> client.load(new LoadRequest(DatasetSpec.of("out", location), true)))
            .isInstanceOfSatisfying(
                FlightRuntimeException.class,
                e -> {
                  assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED);
                  assertThat(ErrorCode.of(e)).contains(ErrorCode.PERMISSION_DENIED);
                  assertThat(e.status().description())
                      .contains("outside the locations this node may read");
                });
        client.drop("out");
      }
    }
  }
}
