package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.floe.initializer.DatasetInitializer;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The TrainJob dataset-initializer against a real node: it loads the dataset and exits 0 once it is
 * READY, exits 1 with the reason when the load fails or the cluster cannot be reached, and 2 when
 * the storage URI is not a table.
 */
class DatasetInitializerTest {
  @TempDir static Path dir;
  private static ClientNode node;
  private static String table;

  @BeforeAll
  static void start() {
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(3, 1_000, TestRows.events(5))
            .metadataLocation();
    node = ClientNode.start();
  }

  @AfterAll
  static void stop() throws Exception {
    node.close();
  }

  private static int initialize(String dataset, String storageUri, String... more) {
    String[] args =
        new String[] {
          "--address",
          node.location().getUri().toString(),
          "--storage-uri",
          storageUri,
          "--dataset",
          dataset,
          "--poll",
          "PT0.1S"
        };
    String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
    System.arraycopy(more, 0, all, args.length, more.length);
    return DatasetInitializer.run(all);
  }

  @Test
  void loadsTheDatasetAndExitsOnceItIsReady() {
    assertThat(initialize("train-a", table, "--columns", "id,user_id")).isZero();
    DatasetStatusReply status = node.client().status("train-a");
    assertThat(status.state()).isEqualTo(State.READY);
    assertThat(status.rows()).isEqualTo(3_000);
    // A second TrainJob naming the same dataset with the same settings finds it loaded.
    assertThat(initialize("train-a", table, "--columns", "id,user_id")).isZero();
  }

  @Test
  void aLoadThatFailsExitsOneAndTheNodeKeepsServing() {
    assertThat(initialize("missing", dir.resolve("no-such-table").toString())).isEqualTo(1);
    assertThat(initialize("train-b", table, "--columns", "no_such_column")).isEqualTo(1);
    assertThat(initialize("train-c", table)).isZero();
  }

  @Test
  void aLoadThatFailsLogsTheNodesReason() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(DatasetInitializer.class);
    log.start();
    logger.addAppender(log);
    try (ClientNode small = ClientNode.start("floe.memory.limit = 1MiB")) {
      String big =
          IcebergTestTables.in(dir)
              .create("big", TestRows.EVENTS)
              .appendFiles(4, 25_000, TestRows.events(9))
              .metadataLocation();
      int code =
          DatasetInitializer.run(
              "--address",
              small.location().getUri().toString(),
              "--storage-uri",
              big,
              "--dataset",
              "too-big",
              "--poll",
              "PT0.1S");
      assertThat(code).isEqualTo(1);
      String reason = small.client().status("too-big").error().message();
      assertThat(reason).contains("memory limit");
      assertThat(log.list)
          .filteredOn(event -> event.getLevel() == Level.ERROR)
          .extracting(ILoggingEvent::getFormattedMessage)
          .containsExactly("Dataset 'too-big' FAILED (RESOURCE_EXHAUSTED): " + reason);
    } finally {
      logger.detachAppender(log);
    }
  }

  @Test
  void aStorageUriThatIsNotATableIsUsage() {
    assertThat(initialize("hf", "hf://tatsu-lab/alpaca")).isEqualTo(2);
  }

  @Test
  void anUnreachableClusterExitsOne() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    int code =
        DatasetInitializer.run(
            "--address",
            "grpc+tcp://127.0.0.1:" + closedPort,
            "--storage-uri",
            table,
            "--dataset",
            "nowhere");
    assertThat(code).isEqualTo(1);
  }
}
