package io.floe.gateway;

import io.floe.dataset.Failure;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.entity.JobEntity;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/** The gateway's questions to job entities, wherever in the cluster they live. */
final class JobQueries {
  private final ClusterSharding sharding;
  private final GatewaySettings settings;

  JobQueries(ActorSystem<?> system, GatewaySettings settings) {
    this.sharding = ClusterSharding.get(system);
    this.settings = settings;
  }

  private EntityRef<JobEntity.Command> job(String id) {
    return sharding.entityRefFor(JobEntity.TYPE_KEY, id);
  }

  CompletionStage<JobStatus> register(JobSpec spec, PinnedLayout layout) {
    return job(spec.job())
        .<JobEntity.JobReply>ask(
            replyTo -> new JobEntity.Register(spec, layout, replyTo), settings.askTimeout())
        .thenApply(JobQueries::statusOrThrow);
  }

  /** The job's status; with an epoch, that epoch's layout (a new epoch begins on the newest). */
  CompletionStage<JobStatus> status(String id, Long epoch) {
    return job(id)
        .<JobEntity.JobReply>ask(
            replyTo -> new JobEntity.GetJob(epoch, replyTo), settings.askTimeout())
        .thenApply(JobQueries::statusOrThrow);
  }

  CompletionStage<JobStatus> drop(String id) {
    return job(id)
        .ask(JobEntity.DropJob::new, settings.askTimeout())
        .thenApply(JobQueries::statusOrThrow);
  }

  CompletionStage<JobEntity.LeaseReply> lease(String id, long epoch, String worker) {
    return job(id)
        .<JobEntity.LeaseReply>ask(
            replyTo -> new JobEntity.Lease(epoch, worker, replyTo), settings.askTimeout())
        .thenApply(reply -> throwIf(reply.failure(), reply));
  }

  CompletionStage<JobEntity.AckReply> ack(String id, long epoch, String lease, String worker) {
    return job(id)
        .<JobEntity.AckReply>ask(
            replyTo -> new JobEntity.Ack(epoch, lease, worker, replyTo), settings.askTimeout())
        .thenApply(reply -> throwIf(reply.failure(), reply));
  }

  private static JobStatus statusOrThrow(JobEntity.JobReply reply) {
    return throwIf(reply.failure(), reply).status();
  }

  private static <T> T throwIf(Failure failure, T reply) {
    if (failure != null) {
      throw FlightErrors.of(failure);
    }
    return reply;
  }
}
