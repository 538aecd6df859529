package io.floe.gateway;

import com.typesafe.config.Config;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Whether enough sharding nodes are Up for shards to be placed. Pekko's shard coordinator places no
 * shard until {@code min-nr-of-members} of the sharding role have registered, and a coordinator
 * that starts again on another node (its node left) checks that anew. A cluster that shrank below
 * the minimum therefore leaves moved slices without a home: reads see a dataset LOADING forever.
 * This names that cause in the errors readers and operators see.
 */
public final class ShardingQuorum {
  private final Cluster cluster;
  private final String role;
  private final String setting;
  private final int minimum;

  public ShardingQuorum(ActorSystem<?> system) {
    this(Cluster.get(system), system.settings().config());
  }

  ShardingQuorum(Cluster cluster, Config config) {
    this.cluster = cluster;
    this.role = config.getString("pekko.cluster.sharding.role");
    String roleMinimum = "pekko.cluster.role." + role + ".min-nr-of-members";
    this.setting =
        !role.isEmpty() && config.hasPath(roleMinimum)
            ? roleMinimum
            : "pekko.cluster.min-nr-of-members";
    this.minimum = config.getInt(setting);
  }

  /** The configured minimum of Up sharding nodes. */
  public int minimum() {
    return minimum;
  }

  /** How many sharding nodes this node sees Up. */
  public int up() {
    int up = 0;
    for (var member : cluster.state().getMembers()) {
      if (member.status() == MemberStatus.up() && (role.isEmpty() || member.hasRole(role))) {
        up++;
      }
    }
    return up;
  }

  /** Why shards may not be placed, or empty while enough nodes are Up. */
  public Optional<String> shortfall() {
    int up = up();
    if (up >= minimum) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            "only %d %s node%s Up, below %s = %d (FLOE_MIN_DATA_MEMBERS), so sharding may"
                + " not place slices until more nodes join or the minimum is lowered",
            up, role.isEmpty() ? "cluster" : role, up == 1 ? " is" : "s are", setting, minimum));
  }
}
