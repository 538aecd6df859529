package io.floe.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.floe.dataset.DatasetEntity;
import io.floe.job.entity.JobEntity;
import java.nio.file.Path;
import java.util.List;

/**
 * Keeps what a node knows of the cluster's datasets and jobs on its disk (floe.state.dir, the pod's
 * volume), so that a restart of every node finds them again: the dataset and job directories
 * (specs, pinned layouts, acknowledged batches) and sharding's remembered entities, which start
 * each dataset and slice again so that datasets reload by themselves. Both are Pekko Distributed
 * Data kept in LMDB; without a state directory they live in memory only.
 */
final class DurableState {
  /** The Distributed Data keys of the dataset and job directories. */
  static final List<String> DIRECTORY_KEYS =
      List.of(DatasetEntity.DIRECTORY.name(), JobEntity.DIRECTORY.name());

  private DurableState() {}

  /** {@code config} with durable storage under floe.state.dir, when that is set. */
  static Config apply(Config config) {
    String dir = config.getString("floe.state.dir");
    if (dir.isBlank()) {
      return config;
    }
    // LMDB reaches into sun.nio.ch; without the flag the first write would kill the JVM later.
    if (!Object.class.getModule().isOpen("sun.nio.ch", DurableState.class.getModule())) {
      throw new IllegalStateException(
          "floe.state.dir (FLOE_STATE_DIR) keeps state in LMDB, which needs the JVM flag"
              + " --add-opens=java.base/sun.nio.ch=ALL-UNNAMED");
    }
    Path root = Path.of(dir).toAbsolutePath();
    return ConfigFactory.empty()
        .withValue(
            "pekko.cluster.distributed-data.durable.keys",
            ConfigValueFactory.fromIterable(DIRECTORY_KEYS))
        .withValue(
            "pekko.cluster.distributed-data.durable.lmdb.dir",
            ConfigValueFactory.fromAnyRef(root.resolve("directories").toString()))
        // Remembered shards and entities: sharding's own replicator, its own LMDB files.
        .withValue(
            "pekko.cluster.sharding.distributed-data.durable.keys",
            ConfigValueFactory.fromIterable(List.of("shard-*")))
        .withValue(
            "pekko.cluster.sharding.distributed-data.durable.lmdb.dir",
            ConfigValueFactory.fromAnyRef(root.resolve("sharding").toString()))
        .withFallback(config);
  }
}
