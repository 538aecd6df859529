package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.floe.iceberg.MemoryNeed;
import java.time.Duration;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two data nodes, each with its own Arrow memory and dataset entities, admit loads through the one
 * admission desk: loads started together through different nodes see each other's reservations, and
 * each decision reads every node's memory as it is then, not as it was last shared. Every message
 * is serialized as between nodes.
 */
class AdmissionDeskTest {
  private static final long KIB = 1024;
  private static final Duration QUICK = Duration.ofSeconds(10);

  private ActorTestKit first;
  private ActorTestKit second;
  private BufferAllocator firstRoot;
  private BufferAllocator secondRoot;
  private ClusterMemory viaFirst;
  private ClusterMemory viaSecond;

  @BeforeEach
  void startTwoDataNodes() {
    first = node();
    second = node();
    Cluster one = Cluster.get(first.system());
    one.manager().tell(Join.create(one.selfMember().address()));
    Cluster.get(second.system()).manager().tell(Join.create(one.selfMember().address()));
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                Cluster.get(second.system()).selfMember().status() == MemberStatus.up()
                    && one.state().getMembers().iterator().hasNext()
                    && countUp(one) == 2);
    firstRoot = new RootAllocator(1024 * KIB);
    secondRoot = new RootAllocator(1024 * KIB);
    viaFirst = new ClusterMemory(firstRoot, 2, 4, Duration.ofMinutes(1));
    viaSecond = new ClusterMemory(secondRoot, 2, 4, Duration.ofMinutes(1));
    viaFirst.start(first.system());
    viaSecond.start(second.system());
    // The desk (on the oldest node, the first) knows both nodes' reporters before a test asks.
    TestProbe<Receptionist.Listing> listing = first.createTestProbe();
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              first
                  .system()
                  .receptionist()
                  .tell(Receptionist.find(AdmissionDesk.REPORTERS, listing.getRef()));
              assertThat(listing.receiveMessage().getServiceInstances(AdmissionDesk.REPORTERS))
                  .hasSize(2);
            });
  }

  private static long countUp(Cluster cluster) {
    long up = 0;
    for (var member : cluster.state().getMembers()) {
      up += member.status() == MemberStatus.up() ? 1 : 0;
    }
    return up;
  }

  private static ActorTestKit node() {
    return ActorTestKit.create(
        "admission-desk-test",
        ConfigFactory.parseString(
                "pekko.actor.provider = cluster\n"
                    + "pekko.cluster.roles = [data]\n"
                    + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                    + "pekko.remote.artery.canonical.port = 0\n"
                    + "pekko.actor.serialize-messages = on\n")
            .withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stop() {
    second.shutdownTestKit();
    first.shutdownTestKit();
    firstRoot.close(); // fails if a buffer a test took was not returned
    secondRoot.close();
  }

  /** A load needing {@code kib} KiB held, nothing while loading. */
  private static MemoryNeed needing(long kib) {
    return new MemoryNeed(kib * KIB, 1_000, 1, 1, 0, 0);
  }

  private static ActorRef<Void> holder(ActorTestKit node) {
    return node.spawn(Behaviors.empty());
  }

  @Test
  void loadsStartedTogetherThroughDifferentNodesSeeEachOthersReservations() {
    TestProbe<AdmissionDesk.Decided> a = first.createTestProbe();
    TestProbe<AdmissionDesk.Decided> b = second.createTestProbe();

    // 2 MiB free in all: each load fits alone, not both.
    viaFirst.admit("a", "1", needing(1100), a.getRef(), holder(first));
    viaSecond.admit("b", "1", needing(1100), b.getRef(), holder(second));

    // Whichever the desk heard first is admitted, and the other waits for it.
    AdmissionDesk.Decided forA = a.receiveMessage(QUICK);
    AdmissionDesk.Decided forB = b.receiveMessage(QUICK);
    boolean aFirst = forA.verdict() == AdmissionDesk.Verdict.ADMITTED;
    AdmissionDesk.Decided waiting = aFirst ? forB : forA;
    assertThat((aFirst ? forA : forB).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    assertThat(waiting.verdict()).isEqualTo(AdmissionDesk.Verdict.QUEUED);
    assertThat(waiting.reason()).contains("1 load in flight reserved 1.1 MiB");

    // The admitted load ends holding 1 MiB over both nodes (Arrow rounds a buffer up to a power
    // of two): 1 MiB is free, the other needs 1,100 KiB and nothing is in flight, so it is refused
    // with the figures.
    try (ArrowBuf onFirst = firstRoot.buffer(512 * KIB);
        ArrowBuf onSecond = secondRoot.buffer(512 * KIB)) {
      if (aFirst) {
        viaFirst.release("a", "1");
      } else {
        viaSecond.release("b", "1");
      }
      AdmissionDesk.Decided later = (aFirst ? b : a).receiveMessage(QUICK);
      assertThat(later.verdict()).isEqualTo(AdmissionDesk.Verdict.REFUSED);
      assertThat(later.dataset()).isEqualTo(waiting.dataset());
      assertThat(later.reason())
          .contains("needs at least 1.1 MiB (1,126,400 bytes)")
          .contains("the 2 data nodes up have 1.0 MiB (1,048,576 bytes) free");
    }
  }

  @Test
  void eachDecisionReadsEveryNodesMemoryAsItIsNow() {
    TestProbe<AdmissionDesk.Decided> probe = first.createTestProbe();
    // Taken on the second node just now: the figures it shares every 2 s may not say so yet.
    try (ArrowBuf taken = secondRoot.buffer(512 * KIB)) {
      viaFirst.admit("late", "1", needing(1600), probe.getRef(), holder(first));

      AdmissionDesk.Decided decided = probe.receiveMessage(QUICK);
      assertThat(decided.verdict()).isEqualTo(AdmissionDesk.Verdict.REFUSED);
      assertThat(decided.reason()).contains("512.0 KiB (524,288 bytes) free of its 1.0 MiB");
    }
  }

  @Test
  void aLoadWhoseEntityStopsEndsItsReservationAndTheNextIsAdmitted() {
    TestProbe<AdmissionDesk.Decided> a = first.createTestProbe();
    TestProbe<AdmissionDesk.Decided> b = second.createTestProbe();
    ActorRef<Void> entity = holder(first);
    viaFirst.admit("a", "1", needing(1500), a.getRef(), entity);
    assertThat(a.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    viaSecond.admit("b", "1", needing(1500), b.getRef(), holder(second));
    assertThat(b.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.QUEUED);

    // The entity of the first load stops without a word (its node died, say).
    first.stop(entity);

    AdmissionDesk.Decided later = b.receiveMessage(QUICK);
    assertThat(later.verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    assertThat(later.load()).isEqualTo("1");
  }

  @Test
  void askingAgainHearsTheSameAndReservesNothingMore() {
    TestProbe<AdmissionDesk.Decided> a = first.createTestProbe();
    ActorRef<Void> entity = holder(first);
    viaFirst.admit("a", "3", needing(1000), a.getRef(), entity);
    viaFirst.admit("a", "3", needing(1000), a.getRef(), entity);
    assertThat(a.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    assertThat(a.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);

    // One release ends the one reservation: 1,048 KiB fit beside nothing.
    viaFirst.release("a", "3");
    TestProbe<AdmissionDesk.Decided> b = second.createTestProbe();
    viaSecond.admit("b", "1", needing(2040), b.getRef(), holder(second));
    assertThat(b.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
  }

  @Test
  void aWaitingLoadIsAdmittedWhenMemoryIsFreedThoughNoLoadEnded() {
    TestProbe<AdmissionDesk.Decided> a = first.createTestProbe();
    TestProbe<AdmissionDesk.Decided> b = second.createTestProbe();
    ArrowBuf loadedEarlier = secondRoot.buffer(800 * KIB);
    viaFirst.admit("a", "1", needing(200), a.getRef(), holder(first));
    assertThat(a.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
    viaSecond.admit("b", "1", needing(1200), b.getRef(), holder(second));
    assertThat(b.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.QUEUED);

    loadedEarlier.close(); // a dataset dropped: no reservation ends

    assertThat(b.receiveMessage(QUICK).verdict()).isEqualTo(AdmissionDesk.Verdict.ADMITTED);
  }
}
