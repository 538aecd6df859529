package io.floe.demo;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.floe.client.FloeClient;
import io.floe.node.FloeNode;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.ticket.FloeTicket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.flight.FlightEndpoint;
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
    if (!table.created() && table.rowCount() != options.rows()) {
      // An earlier run (or benchmark) wrote it with another size; it is reused as it is.
      System.out.printf(
          "  (not the %,d rows asked for: remove %s to write it again)%n",
          options.rows(), options.tableDir());
    }

    boolean ok =
        options.nodes() > 0 ? runOnLocalCluster(table, options) : runInProcess(table, options);
    if (!ok) {
      System.exit(1);
    }
  }

  /** One node inside this JVM: the quickest way to see Floe work. */
  private static boolean runInProcess(SampleTable.Result table, DemoOptions options)
      throws Exception {
    Config config =
        ConfigFactory.parseString(
                "floe.flight.port = 0\nfloe.management.enabled = false\n"
                    // Local use on 127.0.0.1: callers need no token.
                    + "floe.security.auth.anonymous = operator\n"
                    + "floe.security.allowed-locations = \"*\"\n"
                    + "pekko.remote.artery.canonical.port = 0\n")
            .withFallback(ConfigFactory.load());
    try (FloeNode node = FloeNode.start(config);
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location())) {
      System.out.printf("  node up: Flight at %s%n", node.location().getUri());
      boolean ok = run(client, table, options.shards());
      client.drop("demo");
      return ok;
    }
  }

  /** {@code --nodes N}: N data nodes as separate JVMs on 127.0.0.1 forming one cluster. */
  private static boolean runOnLocalCluster(SampleTable.Result table, DemoOptions options)
      throws Exception {
    int seedPort = NodeProcess.freePort();
    Path logs = Path.of("data", "node-logs");
    String secret = NodeProcess.randomSecret();
    List<NodeProcess> nodes = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      for (int i = 0; i < options.nodes(); i++) {
        nodes.add(
            NodeProcess.start(
                "node" + i,
                i == 0 ? seedPort : NodeProcess.freePort(),
                seedPort,
                Map.of(
                    "pekko.cluster.role.data.min-nr-of-members",
                    Integer.toString(options.nodes()),
                    "floe.security.ticket-secret",
                    secret),
                System.getProperty("java.class.path"),
                logs));
      }
      System.out.printf(
          "  starting %d data nodes (logs in %s)...%n", options.nodes(), logs.toAbsolutePath());
      try (FloeClient client = FloeClient.connect(allocator, nodes.get(0).location())) {
        long start = System.nanoTime();
        client.awaitMembers(options.nodes(), java.time.Duration.ofMinutes(2));
        System.out.printf("  cluster of %d nodes up in %.1f s%n", options.nodes(), seconds(start));
        boolean ok = run(client, table, options.shards());
        printPlacement(client, nodes);
        client.drop("demo");
        return ok;
      }
    } finally {
      for (NodeProcess node : nodes) {
        node.terminate();
      }
      for (NodeProcess node : nodes) {
        node.close();
      }
    }
  }

  /** Which node holds how many slices, from the whole dataset's plan. */
  private static void printPlacement(FloeClient client, List<NodeProcess> nodes) {
    Map<String, Set<String>> slices = new TreeMap<>();
    for (NodeProcess node : nodes) {
      slices.put(node.location().getUri().toString(), new TreeSet<>());
    }
    FlightInfo whole = client.plan("demo", 0, 1);
    for (FlightEndpoint endpoint : whole.getEndpoints()) {
      String holder = endpoint.getLocations().get(0).getUri().toString();
      slices
          .computeIfAbsent(holder, h -> new TreeSet<>())
          .add(FloeTicket.parse(endpoint.getTicket()).sliceId());
    }
    for (NodeProcess node : nodes) {
      System.out.printf(
          "  %s at %s holds %d slices%n",
          node.name(),
          node.location().getUri(),
          slices.get(node.location().getUri().toString()).size());
    }
  }

  private static boolean run(FloeClient client, SampleTable.Result table, int shards) {
    long loadStart = System.nanoTime();
    DatasetStatusReply status =
        client.load(new LoadRequest(DatasetSpec.of("demo", table.metadataLocation()), true));
    double ready = seconds(loadStart);
    if (status.state() != DatasetStatusReply.State.READY) {
      System.out.println("  load failed: " + status);
      return false;
    }
    System.out.printf(
        "  dataset 'demo' READY in %.2f s: %,d rows, %d slices, %,d bytes of Arrow off-heap%n",
        ready, status.rows(), status.slicesTotal(), status.bytes());

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

  /** Command line: --rows N, --table-dir PATH, --shards N, --nodes N. */
  record DemoOptions(long rows, Path tableDir, int shards, int nodes) {
    static DemoOptions parse(String[] args) {
      long rows = 2_000_000;
      Path dir = Path.of("data", "sample-table");
      int shards = 2;
      int nodes = 0;
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
          case "--nodes":
            nodes = Integer.parseInt(args[++i]);
            break;
          default:
            throw new IllegalArgumentException(
                "Unknown option "
                    + args[i]
                    + "; known: --rows N, --table-dir PATH, --shards N, --nodes N");
        }
      }
      return new DemoOptions(rows, dir, shards, nodes);
    }
  }
}
