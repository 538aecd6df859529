package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.error.ErrorKind;
import io.floe.resources.NodeResources;
import io.floe.spec.DatasetLayout;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import io.floe.testkit.OneNodeCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dataset and slice entities at actor level with Pekko's testkit: a one-node cluster with its
 * real sharding and replicated directory, real node resources (loader, store, root allocator) and
 * an Iceberg table written by Iceberg's own writers; every message serialized as between nodes.
 * Closing the resources at the end fails if any Arrow memory was not returned.
 */
class DatasetEntityTest {
  private static final String HOLDER = "grpc+tcp://127.0.0.1:1";

  @TempDir static Path dir;
  private static ActorTestKit kit;
  private static NodeResources resources;
  private static String table;

  @BeforeAll
  static void start() {
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(3, 1_000, TestRows.events(11))
            .metadataLocation();
    resources =
        NodeResources.builder()
            .memoryLimitBytes(256L << 20)
            .sliceTargetBytes(16 << 10)
            .loadThreads(2)
            .loadsPerDataset(2)
            .retireLinger(Duration.ZERO)
            .admissionQueueLength(4)
            .admissionWaitTimeout(Duration.ofMinutes(1))
            .build();
    resources.advertise(HOLDER);
    kit = OneNodeCluster.start("dataset-entity-test");
    DatasetEntity.init(kit.system(), resources.datasetPlanning());
    SliceEntity.init(kit.system(), resources.sliceHosting());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
    resources.close(); // throws if a slice's memory was not returned
  }

  /** The caller of every change here: tenancy is GatewayTenancyTest's. */
  private static final Requester OPERATOR =
      Requester.member(new Owner(Owner.DEFAULT_TENANT, "ops"));

  private static EntityRef<DatasetEntity.Command> dataset(String name) {
    return ClusterSharding.get(kit.system()).entityRefFor(DatasetEntity.TYPE_KEY, name);
  }

  private static DatasetEntity.LoadReply load(DatasetSpec spec) {
    TestProbe<DatasetEntity.LoadReply> probe = kit.createTestProbe();
    dataset(spec.name()).tell(new DatasetEntity.Load(spec, true, OPERATOR, probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(60));
  }

  private static DatasetStatus drop(String name) {
    TestProbe<DatasetEntity.LoadReply> probe = kit.createTestProbe();
    dataset(name).tell(new DatasetEntity.Drop(OPERATOR, probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(30)).status();
  }

  @Test
  void aLoadPlansSlicesLoadsThemHereAndServesTheirLayout() {
    DatasetEntity.LoadReply reply = load(DatasetSpec.of("ready", table));
    assertThat(reply).isInstanceOf(DatasetEntity.LoadReply.Answered.class);
    DatasetStatus status = reply.status();
    assertThat(status.state()).isEqualTo(DatasetState.READY);
    assertThat(status.rows()).isEqualTo(3_000);
    assertThat(status.slicesTotal()).isGreaterThan(1).isEqualTo(status.slicesLoaded());

    TestProbe<DatasetEntity.LayoutReply> probe = kit.createTestProbe();
    dataset("ready").tell(new DatasetEntity.GetLayout(probe.ref()));
    DatasetLayout layout =
        ((DatasetEntity.LayoutReply.Found) probe.receiveMessage(Duration.ofSeconds(15))).layout();
    assertThat(layout.rows()).isEqualTo(3_000);
    assertThat(layout.slices()).hasSize(status.slicesTotal());
    assertThat(layout.slices()).allMatch(slice -> slice.holder().equals(HOLDER));
    for (DatasetLayout.SliceRows slice : layout.slices()) {
      // Held here, in the store Flight streams from.
      assertThat(resources.sliceStore().slices())
          .anyMatch(held -> held.sliceId().equals(slice.sliceId()));
    }
    // Loading it again with the same settings answers the dataset as it is.
    assertThat(load(DatasetSpec.of("ready", table)).status().state()).isEqualTo(DatasetState.READY);
    drop("ready");
  }

  @Test
  void otherSettingsUnderTheSameNameAreRefused() {
    load(DatasetSpec.of("settled", table));
    DatasetEntity.LoadReply other =
        load(DatasetSpec.of("settled", table).withColumns(List.of("id")));
    assertThat(other).isInstanceOf(DatasetEntity.LoadReply.Refused.class);
    assertThat(((DatasetEntity.LoadReply.Refused) other).failure().kind())
        .isEqualTo(ErrorKind.ALREADY_EXISTS);
    drop("settled");
  }

  @Test
  void aMissingTableFailsTheLoadByItsKind() {
    DatasetEntity.LoadReply reply =
        load(DatasetSpec.of("missing", dir.resolve("no-such-table").toString()));
    assertThat(reply).isInstanceOf(DatasetEntity.LoadReply.Refused.class);
    assertThat(((DatasetEntity.LoadReply.Refused) reply).failure().kind())
        .isEqualTo(ErrorKind.NOT_FOUND);
    assertThat(reply.status().state()).isEqualTo(DatasetState.FAILED);
  }

  @Test
  void droppingFreesEverySliceAndItsMemory() {
    DatasetStatus loaded = load(DatasetSpec.of("dropped", table)).status();
    assertThat(loaded.state()).isEqualTo(DatasetState.READY);
    long before = resources.allocator().getAllocatedMemory();
    assertThat(before).isPositive();
    DatasetStatus dropped = drop("dropped");
    assertThat(dropped.name()).isEqualTo("dropped");
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> resources.allocator().getAllocatedMemory() <= before - loaded.bytes());
    TestProbe<DatasetStatus> probe = kit.createTestProbe();
    dataset("dropped").tell(new DatasetEntity.GetStatus(probe.ref()));
    assertThat(probe.receiveMessage(Duration.ofSeconds(15)).state()).isEqualTo(DatasetState.ABSENT);
  }

  @Test
  void aFailedDatasetLoadsAgainWithAnySpec() {
    DatasetEntity.LoadReply failed =
        load(DatasetSpec.of("retried", dir.resolve("not-yet").toString()));
    assertThat(failed.status().state()).isEqualTo(DatasetState.FAILED);
    TestProbe<DatasetEntity.LoadReply> refreshed = kit.createTestProbe();
    dataset("retried").tell(new DatasetEntity.Refresh(null, true, OPERATOR, refreshed.ref()));
    assertThat(refreshed.receiveMessage(Duration.ofSeconds(15)))
        .isInstanceOf(DatasetEntity.LoadReply.Refused.class);

    DatasetEntity.LoadReply again = load(DatasetSpec.of("retried", table));
    assertThat(again).isInstanceOf(DatasetEntity.LoadReply.Answered.class);
    assertThat(again.status().state()).isEqualTo(DatasetState.READY);
    assertThat(again.status().rows()).isEqualTo(3_000);
    drop("retried");
  }

  @Test
  void refreshingAnAbsentDatasetIsRefusedAsNotFound() {
    TestProbe<DatasetEntity.LoadReply> probe = kit.createTestProbe();
    dataset("never-loaded").tell(new DatasetEntity.Refresh(null, true, OPERATOR, probe.ref()));
    DatasetEntity.LoadReply reply = probe.receiveMessage(Duration.ofSeconds(15));
    assertThat(reply).isInstanceOf(DatasetEntity.LoadReply.Refused.class);
    assertThat(((DatasetEntity.LoadReply.Refused) reply).failure().kind())
        .isEqualTo(ErrorKind.DATASET_NOT_FOUND);
    assertThat(reply.status().state()).isEqualTo(DatasetState.ABSENT);
  }

  @Test
  void aRefreshLoadsOnlyNewFilesAndKeepsTheOldLayoutWhileAJobHoldsIt() {
    IcebergTestTables.TestTable growing =
        IcebergTestTables.in(dir)
            .create("growing", TestRows.EVENTS)
            .appendFiles(2, 1_000, TestRows.events(5));
    DatasetStatus first = load(DatasetSpec.of("growing", growing.location())).status();
    assertThat(first.state()).isEqualTo(DatasetState.READY);
    TestProbe<DatasetEntity.LayoutReply> layouts = kit.createTestProbe();
    dataset("growing").tell(new DatasetEntity.GetLayout(layouts.ref()));
    String oldFingerprint =
        ((DatasetEntity.LayoutReply.Found) layouts.receiveMessage(Duration.ofSeconds(15)))
            .layout()
            .fingerprint();
    dataset("growing").tell(new DatasetEntity.Hold("job-1", List.of(oldFingerprint)));

    growing.appendFiles(1, 500, TestRows.events(6));
    TestProbe<DatasetEntity.LoadReply> refreshed = kit.createTestProbe();
    dataset("growing").tell(new DatasetEntity.Refresh(null, true, OPERATOR, refreshed.ref()));
    DatasetStatus after = refreshed.receiveMessage(Duration.ofSeconds(60)).status();
    assertThat(after.refresh().state()).isEqualTo(RefreshReport.DONE);
    assertThat(after.refresh().kept()).isEqualTo(first.slicesTotal());
    assertThat(after.refresh().loaded()).isPositive();
    assertThat(after.rows()).isEqualTo(2_500);
    assertThat(after.retained())
        .singleElement()
        .satisfies(
            kept -> {
              assertThat(kept.fingerprint()).isEqualTo(oldFingerprint);
              assertThat(kept.heldBy()).containsExactly("job-1");
            });
    // The job still plans with the layout it started on.
    dataset("growing").tell(new DatasetEntity.GetLayout(oldFingerprint, layouts.ref()));
    assertThat(layouts.receiveMessage(Duration.ofSeconds(15)))
        .isInstanceOfSatisfying(
            DatasetEntity.LayoutReply.Found.class,
            found -> assertThat(found.layout().rows()).isEqualTo(2_000));

    dataset("growing").tell(new DatasetEntity.Unhold("job-1"));
    Awaitility.await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> status("growing").retained().isEmpty());
    drop("growing");
  }

  private static DatasetStatus status(String name) {
    TestProbe<DatasetStatus> probe = kit.createTestProbe();
    dataset(name).tell(new DatasetEntity.GetStatus(probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(15));
  }
}
