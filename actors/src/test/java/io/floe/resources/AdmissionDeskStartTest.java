package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.iceberg.MemoryNeed;
import io.floe.testkit.OneNodeCluster;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A load sent as the node starts, before any reporter is listed or any figure shared, is decided on
 * the desk's own node's memory: not admitted blind. (ConcurrentLoadsAdmissionTest admitted two
 * loads of which one fit when its loads came before the node's reporter was listed.)
 */
class AdmissionDeskStartTest {
  private static final long KIB = 1024;

  private ActorTestKit kit;

  @BeforeEach
  void start() {
    kit = OneNodeCluster.start("admission-desk-start-test", "pekko.cluster.roles = [data]");
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aLoadBeforeAnyReporterIsListedIsDecidedOnThisNodesMemory() {
    String self = Cluster.get(kit.system()).selfMember().address().toString();
    // No reporter runs and nothing was shared: only the desk's own node's figures are known.
    ActorRef<AdmissionDesk.Command> desk =
        kit.spawn(
            AdmissionDesk.create(
                4,
                Duration.ofMinutes(1),
                () -> new NodeMemory(0, 1024 * KIB),
                Map::of,
                () -> Set.of(self)));
    TestProbe<AdmissionDesk.Decided> probe = kit.createTestProbe();
    ActorRef<Void> entity = kit.spawn(Behaviors.empty());

    desk.tell(
        new AdmissionDesk.Admit(
            "big", "1", new MemoryNeed(1100 * KIB, 1_000, 1, 1, 0, 0), probe.getRef(), entity));
    desk.tell(
        new AdmissionDesk.Admit(
            "small", "1", new MemoryNeed(600 * KIB, 1_000, 1, 1, 0, 0), probe.getRef(), entity));
    desk.tell(
        new AdmissionDesk.Admit(
            "second", "1", new MemoryNeed(600 * KIB, 1_000, 1, 1, 0, 0), probe.getRef(), entity));

    assertThat(probe.receiveMessage().verdict()).isEqualTo(AdmissionDesk.Verdict.REFUSED);
    assertThat(probe.receiveMessage().verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    assertThat(probe.receiveMessage().verdict()).isEqualTo(AdmissionDesk.Verdict.QUEUED);
  }
}
