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
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The TrainJob dataset-initializer against a real node: it loads the dataset and exits 0 once it is
 * READY, exits 1 with the reason when the load fails or the cluster cannot be reached, and 2 when
 * the storage URI is not a table. It takes the environment Kubeflow's SDK gives its data cache
 * ({@code cache://<schema>/<table>} with {@code METADATA_LOC}, {@code TRAIN_JOB_NAME}, {@code
 * CLUSTER_SIZE}, {@code IAM_ROLE}) as it is.
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
  void aLoadThatCannotFitIsRefusedWithWhatItNeeds() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(DatasetInitializer.class);
    log.start();
    logger.addAppender(log);
    try (ClientNode small = ClientNode.start("floe.memory.limit = 1MiB")) {
      String big =
          IcebergTestTables.in(dir)
              .create("huge", TestRows.EVENTS)
              .appendFiles(4, 25_000, TestRows.events(9))
              .metadataLocation();
      // Refused up front once the node has shared its memory (within seconds of its start).
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(30))
          .until(
              () ->
                  DatasetInitializer.run(
                              "--address",
                              small.location().getUri().toString(),
                              "--storage-uri",
                              big,
                              "--dataset",
                              "huge",
                              "--poll",
                              "PT0.1S")
                          == 1
                      && log.list.stream()
                          .anyMatch(
                              event ->
                                  event.getLevel() == Level.ERROR
                                      && event.getFormattedMessage().contains("needs at least")));
      assertThat(log.list)
          .filteredOn(event -> event.getFormattedMessage().contains("needs at least"))
          .first()
          .extracting(ILoggingEvent::getFormattedMessage)
          .asString()
          .contains("RESOURCE_EXHAUSTED")
          .contains("free of its 1.0 MiB memory limit");
    } finally {
      logger.detachAppender(log);
    }
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
              // A filter leaves the plan no memory floor, so the load starts and FAILS in a
              // slice (unfiltered, the node refuses it at once: the next test).
              "--filter",
              "id >= 0",
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

  /** What the SDK's DataCacheInitializer and the runtime put in the initializer's environment. */
  private static Map<String, String> kubeflowCacheEnvironment(String trainJob) {
    Map<String, String> env = new HashMap<>();
    env.put("STORAGE_URI", "cache://analytics/events");
    env.put("METADATA_LOC", table);
    env.put("CLUSTER_SIZE", "4");
    env.put("IAM_ROLE", "arn:aws:iam::123456789012:role/events-reader");
    env.put("WORKER_MEM", "2Gi");
    env.put("TRAIN_JOB_NAME", trainJob);
    env.put("FLOE_ADDRESS", node.location().getUri().toString());
    return env;
  }

  @Test
  void theKubeflowSdksCacheEnvironmentLoadsTheTableAsTheTrainJobsDataset() {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(DatasetInitializer.class);
    log.start();
    logger.addAppender(log);
    try {
      assertThat(
              DatasetInitializer.run(kubeflowCacheEnvironment("fine-tune-1"), "--poll", "PT0.1S"))
          .isZero();
    } finally {
      logger.detachAppender(log);
    }
    DatasetStatusReply status = node.client().status("fine-tune-1");
    assertThat(status.state()).isEqualTo(State.READY);
    assertThat(status.rows()).isEqualTo(3_000);
    assertThat(log.list)
        .filteredOn(event -> event.getLevel() == Level.WARN)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "IAM_ROLE arn:aws:iam::123456789012:role/events-reader is not assumed: Floe's nodes"
                + " read table "
                + table
                + " with their own credentials (the role of their ServiceAccount, or FLOE_S3_*"
                + " keys); that role needs read access to it",
            "The TrainJob asked for 3 data nodes (CLUSTER_SIZE 4); Floe's shared cluster serves"
                + " the dataset from the 1 data nodes Up, and this step does not resize it");
    assertThat(log.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .anyMatch(line -> line.startsWith("Not used by Floe") && line.contains("WORKER_MEM=2Gi"))
        .anyMatch(line -> line.startsWith("Dataset 'fine-tune-1' is READY in "));
  }

  @Test
  void withoutMetadataLocTheCacheUrisTableIsLoadedThroughFloeCatalog() throws Exception {
    Path warehouse = dir.resolve("warehouse");
    IcebergTestTables.in(warehouse.resolve("analytics"))
        .create("events", TestRows.EVENTS)
        .appendFiles(2, 500, TestRows.events(3));
    try (ClientNode withCatalog =
        ClientNode.start(
            "floe.catalogs { files { type = hadoop, warehouse = \"file:" + warehouse + "\" } }")) {
      Map<String, String> env = kubeflowCacheEnvironment("fine-tune-2");
      env.remove("METADATA_LOC");
      env.put("FLOE_CATALOG", "files");
      env.put("FLOE_ADDRESS", withCatalog.location().getUri().toString());
      assertThat(DatasetInitializer.run(env, "--poll", "PT0.1S")).isZero();
      DatasetStatusReply status = withCatalog.client().status("fine-tune-2");
      assertThat(status.state()).isEqualTo(State.READY);
      assertThat(status.rows()).isEqualTo(1_000);
      // A schema the catalog does not hold: the node's NOT_FOUND, exit 1.
      env.put("STORAGE_URI", "cache://nosuch/events");
      env.put("TRAIN_JOB_NAME", "fine-tune-3");
      assertThat(DatasetInitializer.run(env, "--poll", "PT0.1S")).isEqualTo(1);
    }
  }

  @Test
  void aMalformedCacheUriIsUsageAndNamesWhatIsWrong() {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(DatasetInitializer.class);
    log.start();
    logger.addAppender(log);
    try {
      Map<String, String> env = kubeflowCacheEnvironment("fine-tune-bad");
      env.put("STORAGE_URI", "cache://analytics");
      assertThat(DatasetInitializer.run(env)).isEqualTo(2);
      env.put("STORAGE_URI", "cache://analytics/events");
      env.remove("METADATA_LOC");
      assertThat(DatasetInitializer.run(env)).isEqualTo(2);
    } finally {
      logger.detachAppender(log);
    }
    assertThat(log.list)
        .filteredOn(event -> event.getLevel() == Level.ERROR)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "Invalid storage URI 'cache://analytics': no table after schema 'analytics';"
                + " Kubeflow's cache takes cache://<schema>/<table>",
            "cache://analytics/events names no table Floe can open: set METADATA_LOC (the"
                + " table's metadata.json, as Kubeflow's SDK does) or FLOE_CATALOG (a catalog the"
                + " Floe nodes are configured with, holding analytics.events)");
    assertThat(node.client().status("fine-tune-bad").state()).isEqualTo(State.ABSENT);
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
