package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dataset still loading answers FAILED_PRECONDITION; one over the memory limit fails cleanly. */
class NotReadyAndMemoryTest {
  @TempDir Path dir;

  @Test
  void readingADatasetThatIsStillPlanningIsFailedPrecondition() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 1_000, TestRows.events(4));
    CountDownLatch release = new CountDownLatch(1);
    try (FloeNode node = TestNodes.start("floe.load.threads = 1");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      // Occupy the node's only load thread so planning waits for the test, not for time.
      node.resources()
          .datasetPlanning()
          .loadExecutor()
          .execute(
              () -> {
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      CompletableFuture<DatasetStatusReply> load =
          CompletableFuture.supplyAsync(
              () ->
                  client.load(
                      new LoadRequest(DatasetSpec.of("slow", table.metadataLocation()), true)));
      Awaitility.await().until(() -> client.status("slow").state() == State.PLANNING);

      // Flight's Java client folds gRPC FAILED_PRECONDITION into INVALID_ARGUMENT, so ask over
      // plain gRPC to see the code on the wire.
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", node.location().getUri().getPort())
              .usePlaintext()
              .build();
      try {
        Flight.FlightDescriptor descriptor =
            Flight.FlightDescriptor.newBuilder()
                .setType(Flight.FlightDescriptor.DescriptorType.CMD)
                .setCmd(ByteString.copyFromUtf8("{\"dataset\": \"slow\"}"))
                .build();
        assertThatThrownBy(
                () -> FlightServiceGrpc.newBlockingStub(channel).getFlightInfo(descriptor))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> {
                  assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                  assertThat(e.getStatus().getDescription())
                      .contains("'slow' is not ready: PLANNING");
                });
      } finally {
        channel.shutdownNow();
      }
      assertThatThrownBy(() -> client.plan("slow", 0, 1))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> assertThat(e.status().description()).contains("not ready"));

      release.countDown();
      assertThat(load.get().state()).isEqualTo(State.READY);
      assertThat(client.read(client.plan("slow", 0, 1), root -> {})).isEqualTo(1_000);
    }
  }

  @Test
  void loadOverTheMemoryLimitIsResourceExhaustedAndFreesEverything() throws Exception {
    IcebergTestTables.TestTable big =
        IcebergTestTables.in(dir)
            .create("big", TestRows.EVENTS)
            .appendFiles(4, 25_000, TestRows.events(9));
    IcebergTestTables.TestTable small =
        IcebergTestTables.in(dir)
            .create("small", TestRows.EVENTS)
            .appendFiles(1, 200, TestRows.events(9));
    try (FloeNode node = TestNodes.start("floe.memory.limit = 1MiB");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      // A filter, even one that keeps every row, leaves the plan no floor to refuse it by: the
      // load starts and runs out of memory in a slice.
      assertThatThrownBy(
              () ->
                  client.load(
                      new LoadRequest(
                          DatasetSpec.of("big", big.metadataLocation()).withFilter("id >= 0"),
                          true)))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> {
                assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
                assertThat(e.status().description())
                    .contains("slice 'big/")
                    .contains("of dataset 'big'")
                    // What the slice needed and what the node had free, both ways.
                    .containsPattern("needed [0-9.]+ KiB \\([0-9,]+ bytes\\) more while decoding")
                    .containsPattern("\\([0-9,]+ bytes\\) free now");
              });
      DatasetStatusReply status = client.status("big");
      assertThat(status.state()).isEqualTo(State.FAILED);
      assertThat(status.error().kind()).isEqualTo("RESOURCE_EXHAUSTED");
      Awaitility.await()
          .untilAsserted(
              () ->
                  assertThat(node.resources().allocator().getAllocatedMemory())
                      .as(io.floe.store.AllocatorTree.describe(node.resources().allocator()))
                      .isZero());

      // The node goes on: a dataset that fits loads and reads in full.
      client.load(new LoadRequest(DatasetSpec.of("small", small.metadataLocation()), true));
      assertThat(client.read(client.plan("small", 0, 1), root -> {})).isEqualTo(200);
    }
  }

  /**
   * A load whose columns alone need more than the nodes have free is refused as soon as it is
   * planned, naming what it needs and what each node has, and loads nothing.
   */
  @Test
  void aLoadThatCannotFitIsRefusedBeforeAnySliceLoads() throws Exception {
    IcebergTestTables.TestTable big =
        IcebergTestTables.in(dir)
            .create("huge", TestRows.EVENTS)
            .appendFiles(4, 25_000, TestRows.events(9));
    try (FloeNode node = TestNodes.start("floe.memory.limit = 1MiB");
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      // The node shares its memory with the cluster within seconds of starting; until then a
      // load is not refused up front (it fails in a slice instead), so ask until it is.
      Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThatThrownBy(
                          () ->
                              client.load(
                                  new LoadRequest(
                                      DatasetSpec.of("huge", big.metadataLocation()), true)))
                      .isInstanceOfSatisfying(
                          FlightRuntimeException.class,
                          e -> {
                            assertThat(e.status().code())
                                .isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
                            assertThat(e.status().description())
                                .contains("Dataset 'huge' needs at least")
                                .contains("100,000 rows")
                                .contains("free of its 1.0 MiB memory limit");
                          }));
      assertThat(client.status("huge").error().kind()).isEqualTo("RESOURCE_EXHAUSTED");
      assertThat(node.resources().sliceStore().size()).isZero();
      Awaitility.await()
          .untilAsserted(
              () -> assertThat(node.resources().allocator().getAllocatedMemory()).isZero());
    }
  }
}
