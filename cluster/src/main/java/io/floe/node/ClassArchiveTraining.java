package io.floe.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * The training run of the class-data-sharing archive that makes a node start faster ({@code ./floe
 * node} and the image build run it as {@code floe node --train-class-archive} under {@code
 * -XX:ArchiveClassesAtExit}): a node on its own, on free ports of 127.0.0.1, started through the
 * same path as a real one, asked for {@code /ready} and a Flight {@code list} until both answer,
 * then made to load a small Iceberg table it writes to a temporary directory and to serve it once,
 * then shut down in order. The JVM writes every class it loaded into the archive when it exits:
 * those of the start and those of a first load and read.
 *
 * <p>Whatever the environment configures (seed nodes, Kubernetes discovery, a state directory, TLS,
 * ports) is overridden: the run must not join a real cluster, take a node's ports or touch its
 * state. The archive holds classes only, never settings.
 */
final class ClassArchiveTraining {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  /** Each Flight call's deadline: a training that hangs must not keep a node from starting. */
  private static final CallOption CALL_TIMEOUT = CallOptions.timeout(120, TimeUnit.SECONDS);

  private ClassArchiveTraining() {}

  /** Runs the training node until it is ready and has answered once; exits normally. */
  static void run(Config settings, StartupTimeline timeline) {
    int management = freePort();
    Path tables;
    String table;
    try {
      tables = Files.createTempDirectory("floe-class-archive-training");
      table = writeTable(tables);
    } catch (IOException e) {
      throw new UncheckedIOException("Could not write the training table", e);
    }
    Config isolated =
        ConfigFactory.parseMap(
                Map.ofEntries(
                    Map.entry("floe.flight.port", 0),
                    Map.entry("floe.flight.bind-host", "127.0.0.1"),
                    Map.entry("floe.flight.advertised-host", ""),
                    Map.entry("floe.state.dir", ""),
                    Map.entry("floe.cluster.discovery", "seed-nodes"),
                    Map.entry("floe.management.enabled", true),
                    Map.entry("floe.security.auth.tokens-file", ""),
                    Map.entry("floe.security.auth.anonymous", "operator"),
                    // No API server to review tokens with, and no token file to give them roles.
                    Map.entry("floe.security.auth.kubernetes.enabled", false),
                    Map.entry("floe.security.allowed-locations", tables.toUri().toString()),
                    Map.entry("floe.memory.limit", "256MiB"),
                    Map.entry("floe.security.tls.cert-file", ""),
                    Map.entry("floe.security.tls.key-file", ""),
                    Map.entry("floe.security.tls.client-ca-file", ""),
                    Map.entry("floe.gateway.warm-up", "0s"),
                    Map.entry("pekko.cluster.seed-nodes", java.util.List.of()),
                    Map.entry("pekko.cluster.role.data.min-nr-of-members", 1),
                    Map.entry("pekko.remote.artery.transport", "tcp"),
                    Map.entry("pekko.remote.artery.canonical.hostname", "127.0.0.1"),
                    Map.entry("pekko.remote.artery.canonical.port", 0),
                    Map.entry("pekko.remote.artery.bind.hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.bind-hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.port", management)))
            .withFallback(settings)
            .resolve();
    try (FloeNode node = FloeNode.start(isolated, timeline)) {
      long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
      URI ready = URI.create("http://127.0.0.1:" + management + "/ready");
      while (!answers(ready)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("The training node was not ready in " + READY_TIMEOUT);
        }
        sleep();
      }
      try (BufferAllocator allocator = new RootAllocator();
          FlightClient client = FlightClient.builder(allocator, node.location()).build()) {
        action(client, "list", "");
        // A load and a read of a small table, so that the classes of a first load (Iceberg,
        // Parquet, Hadoop, the decoders) and of a read come from the archive too.
        action(client, "load", "{\"name\":\"training\",\"table\":\"" + table + "\",\"wait\":true}");
        FlightInfo info =
            client.getInfo(
                FlightDescriptor.command(
                    "{\"dataset\":\"training\",\"shard_index\":0,\"shard_count\":1}"
                        .getBytes(StandardCharsets.UTF_8)),
                CALL_TIMEOUT);
        for (FlightEndpoint endpoint : info.getEndpoints()) {
          try (FlightStream stream = client.getStream(endpoint.getTicket(), CALL_TIMEOUT)) {
            while (stream.next()) {
              stream.getRoot().getRowCount();
            }
          }
        }
        action(client, "drop", "{\"name\":\"training\"}");
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("The training node did not load and serve its table", e);
      }
    } finally {
      deleteRecursively(tables);
    }
  }

  private static void action(FlightClient client, String type, String body) {
    client
        .doAction(new Action(type, body.getBytes(StandardCharsets.UTF_8)), CALL_TIMEOUT)
        .forEachRemaining(result -> {});
  }

  /**
   * A small Iceberg table (Hadoop tables, one Parquet file) with the column types tables commonly
   * hold, some values null; answers its directory.
   */
  private static String writeTable(Path directory) throws IOException {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "count", Types.IntegerType.get()),
            Types.NestedField.optional(3, "score", Types.DoubleType.get()),
            Types.NestedField.optional(4, "weight", Types.FloatType.get()),
            Types.NestedField.optional(5, "name", Types.StringType.get()),
            Types.NestedField.optional(6, "at", Types.TimestampType.withZone()),
            Types.NestedField.optional(7, "flag", Types.BooleanType.get()),
            Types.NestedField.optional(8, "day", Types.DateType.get()));
    String location = directory.resolve("table").toAbsolutePath().toString();
    Table table =
        new HadoopTables(new Configuration())
            .create(schema, PartitionSpec.unpartitioned(), Map.of(), location);
    OutputFile out =
        table.io().newOutputFile(table.locationProvider().newDataLocation("training.parquet"));
    DataWriter<Record> writer =
        Parquet.writeData(out)
            .forTable(table)
            .withSpec(table.spec())
            .createWriterFunc(GenericParquetWriter::create)
            .overwrite()
            .build();
    OffsetDateTime epoch = OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
    try (writer) {
      for (int i = 0; i < 4096; i++) {
        GenericRecord row = GenericRecord.create(schema);
        boolean none = i % 7 == 0;
        row.setField("id", (long) i);
        row.setField("count", none ? null : i);
        row.setField("score", none ? null : i / 3.0);
        row.setField("weight", none ? null : i / 7.0f);
        row.setField("name", none ? null : "row-" + (i % 100));
        row.setField("at", none ? null : epoch.plusSeconds(i));
        row.setField("flag", none ? null : i % 2 == 0);
        row.setField("day", none ? null : LocalDate.of(2026, 1, 1).plusDays(i % 365));
        writer.write(row);
      }
    }
    table.newAppend().appendFile(writer.toDataFile()).commit();
    return location;
  }

  private static void deleteRecursively(Path root) {
    try (var paths = Files.walk(root)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // A temporary directory left behind is harmless.
    }
  }

  private static boolean answers(URI uri) {
    try {
      HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
      connection.setConnectTimeout(2000);
      connection.setReadTimeout(2000);
      try {
        return connection.getResponseCode() == 200;
      } finally {
        connection.disconnect();
      }
    } catch (IOException e) {
      return false;
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the training node", e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
