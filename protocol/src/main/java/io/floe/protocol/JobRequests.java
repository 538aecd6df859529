package io.floe.protocol;

import java.util.Set;

/** The small bodies of the job actions other than {@code register_job}. */
public final class JobRequests {
  private JobRequests() {}

  /** {@code drop_job}: {"job": "..."}. */
  public record JobName(String job) {
    public byte[] toJson() {
      return Json.bytes(Json.object().put("job", job));
    }

    public static JobName parse(byte[] body, String action) {
      String what = action + " action body";
      return new JobName(
          new Fields(Json.parseObject(body, what), what, Set.of("job")).requiredJobId("job"));
    }
  }

  /**
   * {@code job_status}: {"job": "...", "epoch": n}; with an epoch, the answer's layout, rows and
   * batches are that epoch's (an epoch not begun yet begins on the dataset's newest layout).
   */
  public record JobStatusRequest(String job, Long epoch) {
    public byte[] toJson() {
      var node = Json.object().put("job", job);
      if (epoch != null) {
        node.put("epoch", epoch);
      }
      return Json.bytes(node);
    }

    public static JobStatusRequest parse(byte[] body) {
      String what = "job_status action body";
      Fields fields = new Fields(Json.parseObject(body, what), what, Set.of("job", "epoch"));
      Long epoch = fields.optionalLong("epoch");
      if (epoch != null && epoch < 0) {
        throw new IllegalArgumentException("Invalid epoch: " + epoch + " (must be >= 0)");
      }
      return new JobStatusRequest(fields.requiredJobId("job"), epoch);
    }
  }

  /** {@code lease}: {"job", "epoch", "worker"}. */
  public record LeaseRequest(String job, long epoch, String worker) {
    public byte[] toJson() {
      return Json.bytes(Json.object().put("job", job).put("epoch", epoch).put("worker", worker));
    }

    public static LeaseRequest parse(byte[] body) {
      String what = "lease action body";
      Fields fields =
          new Fields(Json.parseObject(body, what), what, Set.of("job", "epoch", "worker"));
      return new LeaseRequest(
          fields.requiredJobId("job"), requiredLong(fields, "epoch", what), workerOf(fields));
    }
  }

  /** {@code ack}: {"job", "epoch", "lease", "worker"}. */
  public record AckRequest(String job, long epoch, String lease, String worker) {
    public byte[] toJson() {
      return Json.bytes(
          Json.object()
              .put("job", job)
              .put("epoch", epoch)
              .put("lease", lease)
              .put("worker", worker));
    }

    public static AckRequest parse(byte[] body) {
      String what = "ack action body";
      Fields fields =
          new Fields(Json.parseObject(body, what), what, Set.of("job", "epoch", "lease", "worker"));
      return new AckRequest(
          fields.requiredJobId("job"),
          requiredLong(fields, "epoch", what),
          requiredLease(fields),
          workerOf(fields));
    }
  }

  static long requiredLong(Fields fields, String field, String what) {
    Long value = fields.optionalLong(field);
    if (value == null) {
      throw new IllegalArgumentException("Missing field '" + field + "' in " + what);
    }
    return value;
  }

  /** Characters of a worker name at most: host, process and a counter fit many times over. */
  static final int WORKER_CHARS_MAX = 256;

  /** Characters of a lease id at most (the node issues ids of a few dozen). */
  static final int LEASE_CHARS_MAX = 128;

  private static String requiredLease(Fields fields) {
    String lease = fields.optionalString("lease", LEASE_CHARS_MAX);
    if (lease == null) {
      throw new IllegalArgumentException("Missing field 'lease' in " + "ack action body");
    }
    return lease;
  }

  private static String workerOf(Fields fields) {
    String worker = fields.optionalString("worker", WORKER_CHARS_MAX);
    return worker == null ? "anonymous" : worker;
  }
}
