package io.floe.testkit;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.awaitility.Awaitility;

/**
 * An actor testkit whose system is a one-node cluster on 127.0.0.1, Up, with every message
 * serialized as it would be between nodes: what sharded entities need to be tested at actor level.
 */
public final class OneNodeCluster {
  private OneNodeCluster() {}

  public static ActorTestKit start(String name) {
    return start(name, "");
  }

  /** {@link #start(String)} with more settings, e.g. {@code pekko.cluster.roles = [data]}. */
  public static ActorTestKit start(String name, String config) {
    ActorTestKit kit =
        ActorTestKit.create(
            name,
            ConfigFactory.parseString(
                    config
                        + "\npekko.actor.provider = cluster\n"
                        + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                        + "pekko.remote.artery.canonical.port = 0\n"
                        + "pekko.actor.serialize-messages = on\n")
                .withFallback(ConfigFactory.load()));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> cluster.selfMember().status() == MemberStatus.up());
    return kit;
  }
}
