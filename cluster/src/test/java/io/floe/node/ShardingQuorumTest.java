package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.protocol.ClusterViewReply;
import io.floe.protocol.DatasetStatusReply.State;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Sharding places nothing while fewer data nodes are Up than its configured minimum. A node in that
 * state says so, in the {@code cluster} action and in the errors of calls that need sharding,
 * instead of only timing out.
 */
class ShardingQuorumTest {
  @Test
  void aNodeBelowTheShardingMinimumSaysWhyTheClusterDoesNotAnswer() throws Exception {
    try (FloeNode node =
            TestNodes.start(
                "pekko.cluster.role.data.min-nr-of-members = 2\nfloe.gateway.ask-timeout = 2s");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      ClusterViewReply cluster = client.cluster();
      assertThat(cluster.minDataNodes()).isEqualTo(2);
      assertThat(cluster.dataNodesUp()).isZero();
      assertThat(cluster.warning())
          .contains("only 0 data nodes are Up")
          .contains("pekko.cluster.role.data.min-nr-of-members = 2");

      assertThatThrownBy(() -> client.status("events"))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> {
                assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT);
                assertThat(e.status().description())
                    .contains("did not answer in time")
                    .contains("only 0 data nodes are Up");
              });
      // The node went on serving: the cluster action still answers.
      assertThat(client.cluster().self()).isNotEmpty();
    }
  }

  @Test
  void aNodeAtTheMinimumHasNoWarning() throws Exception {
    try (FloeNode node = TestNodes.start();
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      Awaitility.await().until(() -> client.cluster().dataNodesUp() == 1);
      ClusterViewReply cluster = client.cluster();
      assertThat(cluster.minDataNodes()).isEqualTo(1);
      assertThat(cluster.warning()).isNull();
      assertThat(client.status("events").state()).isEqualTo(State.ABSENT);
    }
  }
}
