package io.floe.job.entity;

import io.floe.job.JobCounters;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * The job entities running on this node and their counters, for the node's metrics: a job's rows
 * leased, acknowledged and re-issued are reported by the node that holds its entity.
 */
public final class LiveJobs implements Extension {
  public static final Id ID = new Id();

  private final Map<String, Supplier<JobCounters>> jobs = new ConcurrentHashMap<>();

  /** The extension's id. */
  public static final class Id extends AbstractExtensionId<LiveJobs> {
    @Override
    public LiveJobs createExtension(ExtendedActorSystem system) {
      return new LiveJobs();
    }
  }

  public static LiveJobs get(org.apache.pekko.actor.ActorSystem system) {
    return ID.get(system);
  }

  void started(String job, Supplier<JobCounters> counters) {
    jobs.put(job, counters);
  }

  void stopped(String job) {
    jobs.remove(job);
  }

  /** The jobs running here now, by id. */
  public Map<String, Supplier<JobCounters>> running() {
    return Map.copyOf(jobs);
  }
}
