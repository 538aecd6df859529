package io.floe.job.entity;

import io.floe.job.JobRecord;
import java.time.Duration;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** The replicated map of registered jobs' records, by job id; writes and reads go to a majority. */
final class JobDirectory {
  static final Key<LWWMap<String, JobRecord>> KEY = LWWMapKey.create("floe-jobs");
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private JobDirectory() {}

  static Replicator.ReadConsistency read() {
    return new Replicator.ReadMajority(TIMEOUT);
  }

  static Replicator.WriteConsistency write() {
    return new Replicator.WriteMajority(TIMEOUT);
  }
}
