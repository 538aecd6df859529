package io.floe.client;

import io.floe.protocol.AckReply;
import io.floe.protocol.Actions;
import io.floe.protocol.JobRequests;
import io.floe.protocol.JobStatusReply;
import io.floe.protocol.LeaseReply;
import io.floe.util.Preconditions;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.arrow.flight.FlightRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker of a dynamic-mode epoch (docs/protocol.md, "Dynamic reads"): asks for a lease on the
 * next unleased global batch, reads that batch whole and hands it out with its lease; the caller
 * {@link #ack acknowledges} it once its training step used it. While every batch is leased but not
 * all are acknowledged the reader waits as the server says; it ends once the whole epoch is
 * acknowledged, by whichever workers.
 *
 * <p>A lease not acknowledged within the job's {@code lease_timeout_ms} goes to another worker, so
 * a slow or dead worker costs time, not rows. The caller owns and closes every {@link JobBatch};
 * {@link #close()} only frees a batch leased by {@link #hasNext()} and not yet taken. Not
 * thread-safe; give each worker thread its own reader and worker name.
 */
public final class DynamicJobReader implements Iterator<JobBatch>, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DynamicJobReader.class);
  private static final AtomicInteger WORKERS = new AtomicInteger();

  private final FloeClient client;
  private final JobOptions options;
  private final int epoch;
  private final String worker;
  private final Duration patience;
  private JobStatusReply registered;
  private JobBatch leased;
  private boolean done;
  private boolean closed;

  DynamicJobReader(
      FloeClient client, JobOptions options, int epoch, String worker, Duration patience) {
    Preconditions.checkArgument(epoch >= 0, "Invalid epoch: %s (must be >= 0)", epoch);
    Preconditions.checkArgument(
        worker != null && !worker.isEmpty(), "Invalid worker name: '%s'", worker);
    this.client = client;
    this.options = options;
    this.epoch = epoch;
    this.worker = worker;
    this.patience = patience;
  }

  /** host/pid-N/wM: unique per reader within a JVM, readable in the server's logs. */
  static String defaultWorker() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "unknown-host";
    }
    return host + "/pid-" + ProcessHandle.current().pid() + "/w" + WORKERS.incrementAndGet();
  }

  public String worker() {
    return worker;
  }

  public int epoch() {
    return epoch;
  }

  /**
   * Leases and reads the next batch unless one is waiting; blocks while every batch is leased to
   * someone and not yet acknowledged. False once the epoch is acknowledged in full.
   */
  @Override
  public boolean hasNext() {
    if (closed) {
      return false;
    }
    while (leased == null && !done) {
      LeaseReply answer = lease();
      if (answer instanceof LeaseReply.Leased lease) {
        leased = read(lease.batch(), lease.lease());
      } else if (answer instanceof LeaseReply.Wait wait) {
        JobReader.sleep(Math.max(1, wait.retryMillis()));
      } else {
        done = true;
      }
    }
    return leased != null;
  }

  @Override
  public JobBatch next() {
    if (!hasNext()) {
      throw new NoSuchElementException(
          "Epoch " + epoch + " of job '" + options.job() + "' is acknowledged in full");
    }
    JobBatch batch = leased;
    leased = null;
    return batch;
  }

  /**
   * Tells the server the training step consumed this batch. The batch may be closed before or
   * after.
   *
   * @throws IllegalArgumentException for a batch that did not come from a lease
   */
  public AckReply ack(JobBatch batch) {
    String lease =
        batch.lease().orElseThrow(() -> new IllegalArgumentException(batch + " was not leased"));
    byte[] body = new JobRequests.AckRequest(options.job(), batch.epoch(), lease, worker).toJson();
    return AckReply.parse(withJob(() -> client.jobReply(Actions.ACK, body)));
  }

  /** The job's status as the server sees it now, counters included. */
  public JobStatusReply status() {
    return client.jobStatus(options.job());
  }

  @Override
  public void close() {
    closed = true;
    if (leased != null) {
      leased.close();
      leased = null;
    }
  }

  private LeaseReply lease() {
    byte[] body = new JobRequests.LeaseRequest(options.job(), epoch, worker).toJson();
    return LeaseReply.parse(withJob(() -> client.jobReply(Actions.LEASE, body)));
  }

  private JobBatch read(long batch, String lease) {
    JobReader.Builder builder =
        client
            .jobReader(options)
            .epoch(epoch)
            .batchFrom(batch)
            .batchTo(batch + 1)
            .chunkBatches(1)
            .patience(patience);
    if (registered != null) {
      builder.registered(registered);
    }
    try (JobReader reader = builder.open()) {
      return reader.next().withLease(lease);
    }
  }

  /**
   * Failures of an action that another attempt may not meet: no node answered, or the dataset is
   * reloading. An unknown lease or job is final here (an unknown lease stays unknown).
   */
  private static boolean worthRetrying(FlightRuntimeException e) {
    return Failures.retryableAction(e);
  }

  /**
   * Runs a job action, registering the job first the first time and again whenever the cluster
   * answers that it does not know it, and retrying what a new attempt can cure (a node unreachable,
   * the dataset reloading) for up to the patience. A retried {@code lease} whose first answer was
   * lost leaves a lease nobody uses, which times out and goes to the queue again; a retried {@code
   * ack} that had reached the server answers {@code duplicate}.
   */
  private <T> T withJob(Supplier<T> action) {
    long deadline = System.nanoTime() + patience.toNanos();
    int attempt = 0;
    while (true) {
      try {
        if (registered == null) {
          registered = client.registerJob(options);
        }
        return action.get();
      } catch (FlightRuntimeException e) {
        if (JobReader.isUnknownJob(e)) {
          LOG.info("Job '{}' was unknown to the cluster; registering it again", options.job());
          registered = null;
        } else if (!worthRetrying(e)) {
          throw e;
        }
        if (System.nanoTime() > deadline) {
          throw e;
        }
        JobReader.backoff(attempt++);
      }
    }
  }
}
