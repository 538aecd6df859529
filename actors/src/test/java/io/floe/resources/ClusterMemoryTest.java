package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.floe.store.MemoryAdmissionException;
import java.time.Duration;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
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
    kit =
        ActorTestKit.create(
            "cluster-memory-test",
            ConfigFactory.parseString(
                    "pekko.actor.provider = cluster\n"
                        + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                        + "pekko.remote.artery.canonical.port = 0\n"
                        + "pekko.cluster.roles = [data]\n"
                        + "pekko.actor.serialize-messages = on\n")
                .withFallback(ConfigFactory.load()));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> cluster.selfMember().status() == MemberStatus.up());
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
