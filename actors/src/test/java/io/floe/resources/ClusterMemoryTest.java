package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.store.MemoryAdmissionException;
import io.floe.testkit.OneNodeCluster;
import java.time.Duration;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A data node shares its free Arrow memory through the cluster, and a load that cannot fit in it is
 * refused with the figures, in a cluster that serializes every message as between nodes (the
 * sharing actor's own timer messages once failed that, so nothing was ever shared there).
 */
class ClusterMemoryTest {
  private ActorTestKit kit;
  private BufferAllocator root;

  @BeforeEach
  void startDataNode() {
    kit = OneNodeCluster.start("cluster-memory-test", "pekko.cluster.roles = [data]");
    root = new RootAllocator(1L << 20);
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
    root.close();
  }

  @Test
  void aLoadLargerThanTheFreeMemoryTheNodesShareIsRefusedWithTheFigures() {
    ClusterMemory memory = new ClusterMemory(root);
    memory.start(kit.system());
    // Admitted while nothing is known; refused once this node's 1 MiB is heard through the cluster.
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> memory.admit("big", 10L << 20, 1_000_000))
                    .isInstanceOf(MemoryAdmissionException.class)
                    .hasMessageContaining("Dataset 'big' needs at least 10.0 MiB")
                    .hasMessageContaining("1.0 MiB free of its 1.0 MiB memory limit"));
    memory.admit("small", 512L << 10, 1_000);
  }
}
