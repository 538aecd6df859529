package io.floe.multijvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.demo.NodeProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Several node processes forming one cluster; closing it kills every node it started (SIGKILL). The
 * tests assert before they close, and a SIGTERM to every member at once made each wait out Pekko's
 * 10 s cluster-exiting phase (the leader leaves too): a graceful end proves nothing here, and the
 * tests of a node leaving in order send their own SIGTERM.
 */
final class TestCluster implements AutoCloseable {
  static final Duration FORMATION_TIMEOUT = Duration.ofSeconds(90);

  private final List<NodeProcess> nodes = new ArrayList<>();
  private final int seedRemotePort;
  private final Map<String, String> settings;

  private TestCluster(int seedRemotePort, Map<String, String> settings) {
    this.seedRemotePort = seedRemotePort;
    this.settings = settings;
  }

  static TestCluster start(int size, Map<String, String> settings) throws Exception {
    TestCluster cluster = new TestCluster(NodeProcess.freePort(), settings);
    try {
      for (int i = 0; i < size; i++) {
        cluster.add();
      }
      return cluster;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  NodeProcess add() throws IOException {
    int remotePort = nodes.isEmpty() ? seedRemotePort : NodeProcess.freePort();
    String classpath = System.getProperty("surefire.test.class.path");
    NodeProcess node =
        NodeProcess.start(
            "node" + nodes.size(),
            remotePort,
            seedRemotePort,
            settings,
            classpath != null ? classpath : System.getProperty("java.class.path"),
            java.nio.file.Path.of("target", "node-logs"));
    nodes.add(node);
    return node;
  }

  List<NodeProcess> nodes() {
    return nodes;
  }

  NodeProcess node(int i) {
    return nodes.get(i);
  }

  /** Waits until {@code via} sees {@code size} members Up and none unreachable. */
  void awaitMembers(FloeClient via, int size) throws InterruptedException {
    via.awaitMembers(size, FORMATION_TIMEOUT);
  }

  FloeClient client(BufferAllocator allocator, int node) {
    return FloeClient.connect(allocator, nodes.get(node).location());
  }

  /** The index of the first node whose log has a line containing {@code text}. */
  int nodeLogging(String text) throws IOException {
    for (int i = 0; i < nodes.size(); i++) {
      if (Files.readAllLines(nodes.get(i).log()).stream().anyMatch(l -> l.contains(text))) {
        return i;
      }
    }
    throw new IllegalStateException("No node logged '" + text + "'");
  }

  /** The tail of every node's log, for failure messages. */
  String logs() {
    StringBuilder out = new StringBuilder();
    for (NodeProcess node : nodes) {
      out.append("---- ").append(node.name()).append(" (").append(node.log()).append(")\n");
      try {
        List<String> lines = Files.readAllLines(node.log());
        lines
            .subList(Math.max(0, lines.size() - 40), lines.size())
            .forEach(l -> out.append(l).append('\n'));
      } catch (IOException e) {
        out.append("(unreadable: ").append(e).append(")\n");
      }
    }
    return out.toString();
  }

  @Override
  public void close() throws InterruptedException {
    for (NodeProcess node : nodes) {
      node.kill();
    }
    for (NodeProcess node : nodes) {
      node.awaitExit(30);
    }
    assertThat(nodes).noneMatch(NodeProcess::isAlive);
  }
}
