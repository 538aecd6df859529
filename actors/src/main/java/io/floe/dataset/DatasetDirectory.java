package io.floe.dataset;

import java.time.Duration;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** The replicated map of loaded datasets' records, by name; writes and reads go to a majority. */
final class DatasetDirectory {
  static final Key<LWWMap<String, DatasetRecord>> KEY = LWWMapKey.create("floe-datasets");
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private DatasetDirectory() {}

  static Replicator.ReadConsistency read() {
    return new Replicator.ReadMajority(TIMEOUT);
  }

  static Replicator.WriteConsistency write() {
    return new Replicator.WriteMajority(TIMEOUT);
  }

  static LWWMap<String, DatasetRecord> put(
      LWWMap<String, DatasetRecord> map, SelfUniqueAddress node, DatasetRecord record) {
    return map.put(node, record.spec().name(), record);
  }

  static LWWMap<String, DatasetRecord> remove(
      LWWMap<String, DatasetRecord> map, SelfUniqueAddress node, String name) {
    return map.remove(node, name);
  }
}
