package io.floe.protocol;

/** The names of Floe's Flight actions, spelled once for the server and the Java client. */
public final class Actions {
  public static final String LOAD = "load";
  public static final String STATUS = "status";
  public static final String DROP = "drop";
  public static final String REFRESH = "refresh";
  public static final String LIST = "list";
  public static final String CLUSTER = "cluster";
  public static final String REGISTER_JOB = "register_job";
  public static final String JOB_STATUS = "job_status";
  public static final String LIST_JOBS = "list_jobs";
  public static final String DROP_JOB = "drop_job";
  public static final String LEASE = "lease";
  public static final String ACK = "ack";

  private Actions() {}
}
