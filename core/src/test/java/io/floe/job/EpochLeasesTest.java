package io.floe.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EpochLeasesTest {
  private static final long TIMEOUT = 1_000;

  private final JobCounters counters = new JobCounters();

  /** The book an entity restarted elsewhere builds from {@code book}'s record. */
  private static EpochLeases restoredFrom(
      EpochLeases book, JobCounters counters, java.util.List<String> recentAcks) {
    return new EpochLeases(
        0,
        new EpochShape(1000, 100, TailPolicy.DROP),
        TIMEOUT,
        counters,
        book.acknowledgedWords(),
        recentAcks);
  }

  private final EpochLeases leases =
      new EpochLeases(0, new EpochShape(1000, 100, TailPolicy.DROP), TIMEOUT, counters);

  @Test
  void handsOutEveryBatchThenWaitsThenIsDone() {
    String[] ids = new String[10];
    for (int k = 0; k < 10; k++) {
      EpochLeases.Grant grant = leases.lease("w", 0);
      assertThat(grant.batch()).isEqualTo(k);
      assertThat(grant.lease()).startsWith("0:" + k + ":1:");
      ids[k] = grant.lease();
    }
    EpochLeases.Grant wait = leases.lease("w", 10);
    assertThat(wait.lease()).isNull();
    assertThat(wait.done()).isFalse();
    assertThat(wait.retryMillis()).isBetween(1L, EpochLeases.MAX_RETRY_MILLIS);
    for (int k = 0; k < 10; k++) {
      assertThat(leases.ack(ids[k], 20)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    }
    assertThat(leases.lease("w", 30).done()).isTrue();
    assertThat(counters.rowsAcknowledged()).isEqualTo(1000);
    assertThat(counters.rowsReissued()).isZero();
  }

  @Test
  void aLeaseNotAcknowledgedInTimeIsHandedOutAgain() {
    EpochLeases.Grant lost = leases.lease("quiet", 0);
    EpochLeases.Grant next = leases.lease("busy", TIMEOUT + 1);
    assertThat(next.batch()).isEqualTo(lost.batch());
    assertThat(next.lease()).startsWith("0:0:2:");
    assertThat(counters.rowsReissued()).isEqualTo(100);
    // The quiet worker comes back: its batch belongs to the busy one now.
    assertThat(leases.ack(lost.lease(), TIMEOUT + 2)).isEqualTo(EpochLeases.AckOutcome.EXPIRED);
    assertThat(leases.ack(next.lease(), TIMEOUT + 3))
        .isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(leases.ack(lost.lease(), TIMEOUT + 4)).isEqualTo(EpochLeases.AckOutcome.DUPLICATE);
    assertThat(leases.progress().acknowledged()).isEqualTo(1);
  }

  @Test
  void aLateAcknowledgementCountsWhileItsBatchWaitsInTheQueue() {
    EpochLeases.Grant late = leases.lease("slow", 0);
    leases.expire(TIMEOUT + 1);
    assertThat(leases.ack(late.lease(), TIMEOUT + 2))
        .isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(leases.lease("other", TIMEOUT + 3).batch()).isEqualTo(1);
  }

  @Test
  void unknownLeasesAreRefused() {
    String issued = leases.lease("w", 0).lease();
    String book = issued.substring(issued.lastIndexOf(':') + 1);
    assertThat(leases.ack("0:0:2:" + book, 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
    assertThat(leases.ack("1:0:1:" + book, 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
    assertThat(leases.ack("0:99:1:" + book, 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
    assertThat(leases.ack("0:0:1:another", 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
    assertThat(leases.ack("0:0:1", 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
    assertThat(leases.ack("forged", 1)).isEqualTo(EpochLeases.AckOutcome.UNKNOWN);
  }

  @Test
  void aBatchLeasedBeforeAndAfterAMoveCountsOnce() {
    // The old book leased batch 0 to A; the entity moved before A acknowledged.
    EpochLeases.Grant beforeMove = leases.lease("A", 0);
    JobCounters fresh = new JobCounters();
    EpochLeases restored = restoredFrom(leases, fresh, leases.recentAcks());
    // The restored book does not know A's lease and hands batch 0 to B: another id.
    EpochLeases.Grant afterMove = restored.lease("B", 1);
    assertThat(afterMove.batch()).isEqualTo(beforeMove.batch());
    assertThat(afterMove.lease()).isNotEqualTo(beforeMove.lease());
    // Whichever acknowledges, the batch counts once.
    assertThat(restored.ack(beforeMove.lease(), 2)).isEqualTo(EpochLeases.AckOutcome.EXPIRED);
    assertThat(restored.ack(afterMove.lease(), 3)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(restored.ack(beforeMove.lease(), 4)).isEqualTo(EpochLeases.AckOutcome.DUPLICATE);
    assertThat(fresh.rowsAcknowledged()).isEqualTo(100);
  }

  @Test
  void aRestoredBookKeepsItsAcknowledgementsAndAcceptsLeasesItDidNotIssue() {
    EpochLeases.Grant first = leases.lease("w", 0);
    EpochLeases.Grant second = leases.lease("w", 0);
    leases.ack(first.lease(), 1);
    JobCounters fresh = new JobCounters();
    EpochLeases restored = restoredFrom(leases, fresh, leases.recentAcks());
    assertThat(restored.progress().acknowledged()).isEqualTo(1);
    assertThat(restored.progress().pending()).isEqualTo(9);
    assertThat(fresh.rowsAcknowledged()).isEqualTo(100);
    // The second lease was out when the entity moved: its acknowledgement still counts once.
    assertThat(restored.ack(second.lease(), 2)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    // The first lease's acknowledgement sent again (its answer lost in the move): answered as the
    // first time, counted once.
    assertThat(restored.ack(first.lease(), 2)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(fresh.rowsAcknowledged()).isEqualTo(200);
    assertThat(restored.progress().acknowledged()).isEqualTo(2);
    assertThat(restored.lease("w", 3).batch()).isEqualTo(2);
    // A book restored without the recent acknowledgements cannot tell: another worker's, then.
    EpochLeases forgetful = restoredFrom(leases, new JobCounters(), java.util.List.of());
    assertThat(forgetful.ack(first.lease(), 2)).isEqualTo(EpochLeases.AckOutcome.DUPLICATE);
  }

  @Test
  void anAcknowledgementSentAgainIsAnsweredAsTheFirstTimeAndCountedOnce() {
    JobCounters counters = new JobCounters();
    EpochLeases leases =
        new EpochLeases(0, new EpochShape(1000, 100, TailPolicy.DROP), TIMEOUT, counters);
    String lease = leases.lease("w", 0).lease();
    assertThat(leases.ack(lease, 1)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(leases.ack(lease, 2)).isEqualTo(EpochLeases.AckOutcome.ACKNOWLEDGED);
    assertThat(counters.rowsAcknowledged()).isEqualTo(100);
    assertThat(leases.progress().acknowledged()).isEqualTo(1);
  }

  /** Workers that come, go and stall at random: every batch is acknowledged exactly once. */
  @Test
  void randomWorkersAcknowledgeEveryBatchOnce() {
    for (long seed = 1; seed <= 5; seed++) {
      Random random = new Random(seed);
      JobCounters totals = new JobCounters();
      EpochLeases epoch =
          new EpochLeases(3, new EpochShape(10_000, 64, TailPolicy.PAD), TIMEOUT, totals);
      BitSet acked = new BitSet();
      long now = 0;
      while (true) {
        now += random.nextInt(300);
        EpochLeases.Grant grant = epoch.lease("w" + random.nextInt(4), now);
        if (grant.done()) {
          break;
        }
        if (grant.lease() == null) {
          now += grant.retryMillis();
          continue;
        }
        if (random.nextInt(5) == 0) {
          continue; // this worker died holding the lease
        }
        long took = random.nextInt(5) == 0 ? TIMEOUT + random.nextInt(500) : random.nextInt(500);
        EpochLeases.AckOutcome outcome = epoch.ack(grant.lease(), now + took);
        if (outcome == EpochLeases.AckOutcome.ACKNOWLEDGED) {
          assertThat(acked.get((int) grant.batch())).isFalse();
          acked.set((int) grant.batch());
        }
      }
      assertThat(acked.cardinality()).isEqualTo(157);
      assertThat(totals.rowsAcknowledged()).isEqualTo(157 * 64);
      assertThat(totals.rowsReissued()).isPositive();
    }
  }
}
