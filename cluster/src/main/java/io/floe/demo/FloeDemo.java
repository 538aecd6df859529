package io.floe.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.floe.client.FloeClient;
import io.floe.dataset.DatasetSpec;
import io.floe.node.FloeNode;
import io.floe.protocol.LoadRequest;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;

/**
 * The one-command demo: writes a sample Iceberg table on local disk (once), starts a data node on
 * 127.0.0.1, loads the table, reads one epoch as two shards over Flight, and prints what a person
 * wants to know first. Exits non-zero if the rows read differ from the table's.
 */
public final class FloeDemo {
  private FloeDemo() {}

  public static void main(String[] args) throws Exception {
    DemoOptions options = DemoOptions.parse(args);
    System.out.printf(
        "Floe demo: sample table at %s (%,d rows)%n", options.tableDir(), options.rows());
    long writeStart = System.nanoTime();
    SampleTable.Result table =
        SampleTable.ensure(
            options.tableDir(),
            options.rows(),
            SampleTable.DEFAULT_FILES,
            SampleTable.DEFAULT_SEED);
    System.out.printf(
        "  table %s: %,d rows in %s (%.1f s)%n",
        table.created() ? "written" : "found",
        table.rowCount(),
        table.metadataLocation(),
        seconds(writeStart));

    Config config =
        ConfigFactory.parseString(
                "floe.flight.port = 0\nfloe.management.enabled = false\n"
                    + "pekko.remote.artery.canonical.port = 0\n")
            .withFallback(ConfigFactory.load());
    boolean ok;
    try (FloeNode node = FloeNode.start(config);
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      System.out.printf("  node up: Flight at %s%n", node.location().getUri());
      ok = run(client, table, options.shards());
      client.drop("demo");
    }
    if (!ok) {
      System.exit(1);
    }
  }

  private static boolean run(FloeClient client, SampleTable.Result table, int shards) {
    long loadStart = System.nanoTime();
    JsonNode status =
        client.load(new LoadRequest(DatasetSpec.of("demo", table.metadataLocation()), true));
    double ready = seconds(loadStart);
    if (!"READY".equals(status.path("state").asText())) {
      System.out.println("  load failed: " + status);
      return false;
    }
    System.out.printf(
        "  dataset 'demo' READY in %.2f s: %,d rows, %d slices, %,d bytes of Arrow off-heap%n",
        ready,
        status.path("rows").asLong(),
        status.path("slices_total").asInt(),
        status.path("bytes").asLong());

    long totalRows = 0;
    long totalBytes = 0;
    long readStart = System.nanoTime();
    for (int shard = 0; shard < shards; shard++) {
      FlightInfo info = client.plan("demo", shard, shards);
      long[] bytes = {0};
      long shardStart = System.nanoTime();
      long rows =
          client.read(
              info,
              root -> {
                for (FieldVector vector : root.getFieldVectors()) {
                  bytes[0] += vector.getBufferSize();
                }
              });
      System.out.printf(
          "  shard %d/%d: %,d rows (planned %,d) in %d endpoints, %,d bytes, %.2f s%n",
          shard,
          shards,
          rows,
          info.getRecords(),
          info.getEndpoints().size(),
          bytes[0],
          seconds(shardStart));
      totalRows += rows;
      totalBytes += bytes[0];
    }
    double readSeconds = seconds(readStart);
    boolean exact = totalRows == table.rowCount();
    System.out.printf(
        "  epoch: %,d rows read of %,d in the table (%s), %,d bytes in %.2f s = %.0f MB/s, %.1f M rows/s%n",
        totalRows,
        table.rowCount(),
        exact ? "exact" : "MISMATCH",
        totalBytes,
        readSeconds,
        totalBytes / readSeconds / 1e6,
        totalRows / readSeconds / 1e6);
    return exact;
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** Command line: --rows N, --table-dir PATH, --shards N. */
  record DemoOptions(long rows, Path tableDir, int shards) {
    static DemoOptions parse(String[] args) {
      long rows = 2_000_000;
      Path dir = Path.of("data", "sample-table");
      int shards = 2;
      for (int i = 0; i < args.length; i++) {
        String arg = args[i].toLowerCase(Locale.ROOT);
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("Missing value after " + args[i]);
        }
        switch (arg) {
          case "--rows":
            rows = Long.parseLong(args[++i]);
            break;
          case "--table-dir":
            dir = Path.of(args[++i]);
            break;
          case "--shards":
            shards = Integer.parseInt(args[++i]);
            break;
          default:
            throw new IllegalArgumentException(
                "Unknown option " + args[i] + "; known: --rows N, --table-dir PATH, --shards N");
        }
      }
      return new DemoOptions(rows, dir, shards);
    }
  }
}
