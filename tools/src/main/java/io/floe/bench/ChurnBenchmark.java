package io.floe.bench;

import io.floe.client.FloeClient;
import io.floe.demo.NodeProcess;
import io.floe.demo.SampleTable;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.ticket.FloeTicket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * How much moves when the cluster changes: starts 3 data-node processes, loads the sample table,
 * adds a 4th node, waits until placement is stable and the dataset READY, then stops (SIGTERM) the
 * 4th and waits again. For each change it prints the slices that moved (of all), the Arrow bytes
 * reloaded, and the seconds until the dataset was READY with placement settled.
 */
public final class ChurnBenchmark {
  private static final long SETTLED_MILLIS = 8_000;

  private ChurnBenchmark() {}

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000;
    String sliceSize = args.length > 1 ? args[1] : "2MiB";
    SampleTable.Result table =
        SampleTable.ensure(
            Path.of("data", "sample-table-" + rows),
            rows,
            SampleTable.DEFAULT_FILES,
            SampleTable.DEFAULT_SEED);
    Map<String, String> settings =
        Map.of(
            "floe.load.slice-target-size", sliceSize,
            "floe.load.threads", "1",
            "floe.security.ticket-secret", NodeProcess.randomSecret(),
            "floe.memory.limit", "2GiB",
            "floe.load.retire-linger", "5s",
            "pekko.cluster.role.data.min-nr-of-members", "3",
            "pekko.cluster.sharding.rebalance-interval", "2s");
    int seedPort = NodeProcess.freePort();
    List<NodeProcess> nodes = new ArrayList<>();
    Path logs = Path.of("data", "node-logs");
    String classpath = System.getProperty("java.class.path");
    try (BufferAllocator allocator = new RootAllocator()) {
      for (int i = 0; i < 3; i++) {
        nodes.add(
            NodeProcess.start(
                "node" + i,
                i == 0 ? seedPort : NodeProcess.freePort(),
                seedPort,
                settings,
                classpath,
                logs));
      }
      try (FloeClient client = FloeClient.connect(allocator, nodes.get(0).location())) {
        client.awaitMembers(3, java.time.Duration.ofMinutes(3));
        DatasetStatusReply status =
            client.load(new LoadRequest(DatasetSpec.of("churn", table.metadataLocation()), true));
        System.out.printf(
            "dataset: %,d rows, %d slices, %,d bytes on 3 nodes%n",
            status.rows(), status.slicesTotal(), status.bytes());

        Map<String, Placement> before = placement(client);
        long start = System.nanoTime();
        nodes.add(
            NodeProcess.start(
                "node3", NodeProcess.freePort(), seedPort, settings, classpath, logs));
        client.awaitMembers(4, java.time.Duration.ofMinutes(3));
        Map<String, Placement> afterJoin = settle(client);
        report("3 -> 4 (node joins)", before, afterJoin, start);

        start = System.nanoTime();
        NodeProcess leaving = nodes.get(3);
        leaving.terminate();
        leaving.awaitExit(120);
        client.awaitMembers(3, java.time.Duration.ofMinutes(3));
        Map<String, Placement> afterLeave = settle(client);
        report("4 -> 3 (node leaves, SIGTERM)", afterJoin, afterLeave, start);
        long onLeaving =
            afterJoin.values().stream()
                .filter(p -> p.holder.equals(leaving.location().getUri().toString()))
                .count();
        System.out.printf("  slices the leaving node held: %d%n", onLeaving);
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

  private record Placement(String holder, long bytes) {}

  private static Map<String, Placement> placement(FloeClient client) {
    FlightInfo info = client.plan("churn", 0, 1);
    Map<String, Placement> slices = new HashMap<>();
    double bytesPerRow = (double) info.getBytes() / Math.max(1, info.getRecords());
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      FloeTicket ticket = FloeTicket.parse(endpoint.getTicket());
      slices.put(
          ticket.sliceId(),
          new Placement(
              endpoint.getLocations().get(0).getUri().toString(),
              Math.round(ticket.rows() * bytesPerRow)));
    }
    return slices;
  }

  /** Waits until the dataset is READY and no slice has moved for a while. */
  private static Map<String, Placement> settle(FloeClient client) throws InterruptedException {
    Map<String, Placement> last = null;
    long stableSince = System.nanoTime();
    while (true) {
      Map<String, Placement> now = null;
      try {
        if (client.status("churn").state() == DatasetStatusReply.State.READY) {
          now = placement(client);
        }
      } catch (RuntimeException e) {
        // reloading; try again
      }
      if (now == null || !now.equals(last)) {
        last = now;
        stableSince = System.nanoTime();
      } else if ((System.nanoTime() - stableSince) / 1_000_000 >= SETTLED_MILLIS) {
        return now;
      }
      Thread.sleep(250);
    }
  }

  private static void report(
      String change, Map<String, Placement> before, Map<String, Placement> after, long start) {
    long moved = 0;
    long bytes = 0;
    for (Map.Entry<String, Placement> slice : before.entrySet()) {
      Placement now = after.get(slice.getKey());
      if (now != null && !now.holder.equals(slice.getValue().holder)) {
        moved++;
        bytes += now.bytes;
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9 - SETTLED_MILLIS / 1e3;
    System.out.printf(
        "%s: %d of %d slices moved (%.0f%%), %,d bytes reloaded, READY and settled after %.1f s%n",
        change, moved, before.size(), 100.0 * moved / before.size(), bytes, seconds);
  }
}
