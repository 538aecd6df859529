package io.floe.job.entity;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.dataset.DatasetEntity;
import io.floe.error.ErrorKind;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.TailPolicy;
import io.floe.spec.DatasetLayout;
import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import io.floe.testkit.OneNodeCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The job entity at actor level, on a one-node cluster with its real sharding and replicated job
 * directory, every message serialized as between nodes. Its dataset is a stand-in that answers the
 * layout a job's epochs read: 2 slices of 1,000 rows.
 */
class JobEntityTest {
  /** The caller of every request here: tenancy is GatewayTenancyTest's. */
  private static final Requester TRAINER =
      Requester.member(new Owner(Owner.DEFAULT_TENANT, "trainer"));

  private static final DatasetLayout LAYOUT =
      new DatasetLayout(
          "events",
          7L,
          null,
          "{}",
          List.of(
              new DatasetLayout.SliceRows("events/0/0", 1_000, 8_000, "grpc+tcp://127.0.0.1:1"),
              new DatasetLayout.SliceRows("events/0/1", 1_000, 8_000, "grpc+tcp://127.0.0.1:1")));
  private static final PinnedLayout PINNED =
      new PinnedLayout(LAYOUT.snapshotId(), LAYOUT.fingerprint(), LAYOUT.rows());

  private static final String SILENT = "silent";
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = OneNodeCluster.start("job-entity-test");
    JobEntity.init(kit.system());
    ClusterSharding.get(kit.system())
        .init(
            Entity.of(
                DatasetEntity.TYPE_KEY,
                ctx ->
                    Behaviors.receive(DatasetEntity.Command.class)
                        .onMessage(
                            DatasetEntity.GetLayout.class,
                            get -> {
                              // A dataset that never answers: its node is gone, say.
                              if (!ctx.getEntityId().equals(SILENT)) {
                                get.replyTo()
                                    .tell(new DatasetEntity.LayoutReply.Found(LAYOUT, null));
                              }
                              return Behaviors.same();
                            })
                        .onAnyMessage(other -> Behaviors.same())
                        .build()));
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static JobSpec dynamic(String job, int batchRows) {
    return dynamic(job, batchRows, 60_000);
  }

  private static JobSpec dynamic(String job, int batchRows, long leaseTimeoutMillis) {
    return new JobSpec(
        job,
        "events",
        3,
        true,
        JobMode.DYNAMIC,
        List.of(),
        batchRows,
        TailPolicy.DROP,
        100,
        4,
        1,
        leaseTimeoutMillis,
        false);
  }

  private static EntityRef<JobEntity.Command> job(String id) {
    return ClusterSharding.get(kit.system()).entityRefFor(JobEntity.TYPE_KEY, id);
  }

  private static JobEntity.JobReply register(JobSpec spec) {
    TestProbe<JobEntity.JobReply> probe = kit.createTestProbe();
    job(spec.job()).tell(new JobEntity.Register(spec, PINNED, TRAINER.owner(), probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(15));
  }

  private static JobEntity.LeaseReply lease(String id, long epoch, String request) {
    TestProbe<JobEntity.LeaseReply> probe = kit.createTestProbe();
    job(id).tell(new JobEntity.Lease(epoch, "w-1", request, probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(15));
  }

  private static JobEntity.AckReply ack(String id, long epoch, String lease) {
    TestProbe<JobEntity.AckReply> probe = kit.createTestProbe();
    job(id).tell(new JobEntity.Ack(epoch, lease, "w-1", probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(15));
  }

  @Test
  void registeringIsIdempotentAndOtherSettingsAreRefused() {
    JobEntity.JobReply first = register(dynamic("same", 100));
    assertThat(first).isInstanceOf(JobEntity.JobReply.Found.class);
    JobStatus status = ((JobEntity.JobReply.Found) first).status();
    assertThat(status.batchesPerEpoch()).isEqualTo(20);
    assertThat(status.layout()).isEqualTo(PINNED);
    assertThat(register(dynamic("same", 100))).isEqualTo(first);

    JobEntity.JobReply other = register(dynamic("same", 200));
    assertThat(other).isInstanceOf(JobEntity.JobReply.Refused.class);
    assertThat(((JobEntity.JobReply.Refused) other).failure().kind())
        .isEqualTo(ErrorKind.ALREADY_EXISTS);
  }

  @Test
  void anUnknownJobIsRefusedByItsKind() {
    TestProbe<JobEntity.JobReply> probe = kit.createTestProbe();
    job("never-registered").tell(new JobEntity.GetJob(probe.ref()));
    JobEntity.JobReply reply = probe.receiveMessage(Duration.ofSeconds(15));
    assertThat(reply).isInstanceOf(JobEntity.JobReply.Refused.class);
    assertThat(((JobEntity.JobReply.Refused) reply).failure().kind())
        .isEqualTo(ErrorKind.JOB_NOT_FOUND);
    assertThat(ack("never-registered", 0, "no-such-lease"))
        .isInstanceOf(JobEntity.AckReply.Refused.class);
  }

  @Test
  void aDroppedJobIsUnknownUntilRegisteredAgainAndThenStartsAfresh() {
    register(dynamic("again", 100));
    JobEntity.LeaseReply.Leased first = (JobEntity.LeaseReply.Leased) lease("again", 0, "r-1");
    assertThat(ack("again", 0, first.lease()))
        .isEqualTo(new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.ACKNOWLEDGED));

    TestProbe<JobEntity.JobReply> dropped = kit.createTestProbe();
    job("again").tell(new JobEntity.DropJob(TRAINER, dropped.ref()));
    JobEntity.JobReply last = dropped.receiveMessage(Duration.ofSeconds(15));
    assertThat(((JobEntity.JobReply.Found) last).status().rowsAcknowledged()).isEqualTo(100);
    assertThat(lease("again", 0, "r-2")).isInstanceOf(JobEntity.LeaseReply.Refused.class);

    // Other settings are no conflict once dropped; nothing of the old job's progress remains.
    JobEntity.JobReply again = register(dynamic("again", 200));
    assertThat(again).isInstanceOf(JobEntity.JobReply.Found.class);
    JobStatus status = ((JobEntity.JobReply.Found) again).status();
    assertThat(status.batchesPerEpoch()).isEqualTo(10);
    assertThat(status.rowsAcknowledged()).isZero();
    assertThat(lease("again", 0, "r-3")).isInstanceOf(JobEntity.LeaseReply.Leased.class);
  }

  @Test
  void dropAnswersTheRequestsWaitingForAnEpochsLayout() {
    JobSpec onSilent =
        new JobSpec(
            "waiting",
            SILENT,
            3,
            true,
            JobMode.DYNAMIC,
            List.of(),
            100,
            TailPolicy.DROP,
            100,
            4,
            1,
            60_000,
            false);
    register(onSilent);
    // Epoch 0 begins on the dataset's newest layout, which the silent dataset never gives.
    TestProbe<JobEntity.LeaseReply> waiting = kit.createTestProbe();
    job("waiting").tell(new JobEntity.Lease(0, "w-1", "r-1", waiting.ref()));
    waiting.expectNoMessage(Duration.ofMillis(300));

    TestProbe<JobEntity.JobReply> dropped = kit.createTestProbe();
    job("waiting").tell(new JobEntity.DropJob(TRAINER, dropped.ref()));
    assertThat(dropped.receiveMessage(Duration.ofSeconds(5)))
        .isInstanceOf(JobEntity.JobReply.Found.class);
    // Refused at once, well before the 10 s the layout ask would take to time out.
    JobEntity.LeaseReply refused = waiting.receiveMessage(Duration.ofSeconds(3));
    assertThat(refused).isInstanceOf(JobEntity.LeaseReply.Refused.class);
    assertThat(((JobEntity.LeaseReply.Refused) refused).failure().kind())
        .isEqualTo(ErrorKind.JOB_NOT_FOUND);
  }

  @Test
  void everyBatchIsLeasedOnceAndAnAskedTwiceLeaseIsTheSameGrant() {
    register(dynamic("leases", 100));
    Set<Long> batches = new HashSet<>();
    JobEntity.LeaseReply reply = lease("leases", 0, "request-0");
    // Asked again (the gateway's repeated ask after a lost answer): the same grant, not another.
    assertThat(lease("leases", 0, "request-0")).isEqualTo(reply);
    int request = 1;
    while (reply instanceof JobEntity.LeaseReply.Leased leased) {
      assertThat(batches.add(leased.batch())).as("batch %s leased twice", leased.batch()).isTrue();
      assertThat(leased.rows()).isEqualTo(100);
      assertThat(ack("leases", 0, leased.lease()))
          .isEqualTo(new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.ACKNOWLEDGED));
      // The same acknowledgement sent again (its answer was lost) is answered as the first time
      // was, and counted once (the totals below).
      assertThat(ack("leases", 0, leased.lease()))
          .isEqualTo(new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.ACKNOWLEDGED));
      reply = lease("leases", 0, "request-" + request++);
    }
    assertThat(reply).isEqualTo(new JobEntity.LeaseReply.Done(0));
    assertThat(batches).hasSize(20).allMatch(b -> b >= 0 && b < 20);

    TestProbe<JobEntity.JobReply> probe = kit.createTestProbe();
    job("leases").tell(new JobEntity.GetJob(probe.ref()));
    JobStatus status =
        ((JobEntity.JobReply.Found) probe.receiveMessage(Duration.ofSeconds(15))).status();
    assertThat(status.rowsLeased()).isEqualTo(2_000);
    assertThat(status.rowsAcknowledged()).isEqualTo(2_000);
    assertThat(status.rowsReissued()).isZero();
  }

  @Test
  void aLeaseNotAcknowledgedInTimeIsHandedOutAgainAndItsLateAckExpires() throws Exception {
    register(dynamic("expiry", 100, 300));
    JobEntity.LeaseReply.Leased first = (JobEntity.LeaseReply.Leased) lease("expiry", 0, "r-1");
    Thread.sleep(600); // past the 300 ms lease timeout
    JobEntity.LeaseReply.Leased again = (JobEntity.LeaseReply.Leased) lease("expiry", 0, "r-2");
    assertThat(again.batch()).isEqualTo(first.batch());
    assertThat(again.lease()).isNotEqualTo(first.lease());
    // The first worker comes back late: its batch is another worker's now.
    assertThat(ack("expiry", 0, first.lease()))
        .isEqualTo(new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.EXPIRED));
    assertThat(ack("expiry", 0, again.lease()))
        .isEqualTo(new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.ACKNOWLEDGED));
    TestProbe<JobEntity.JobReply> probe = kit.createTestProbe();
    job("expiry").tell(new JobEntity.GetJob(probe.ref()));
    JobStatus status =
        ((JobEntity.JobReply.Found) probe.receiveMessage(Duration.ofSeconds(15))).status();
    assertThat(status.rowsReissued()).isEqualTo(100);
    assertThat(status.rowsAcknowledged()).isEqualTo(100);
  }
}
