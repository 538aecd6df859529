package io.floe.job;

/** A job's running totals of rows leased, acknowledged and re-issued, over all its epochs. */
public final class JobCounters {
  // Written by the job's entity only; volatile so that a metrics scrape reads them whole.
  private volatile long rowsLeased;
  private volatile long rowsAcknowledged;
  private volatile long rowsReissued;

  public void leased(long rows) {
    rowsLeased += rows;
  }

  public void acknowledged(long rows) {
    rowsAcknowledged += rows;
  }

  public void reissued(long rows) {
    rowsReissued += rows;
  }

  public long rowsLeased() {
    return rowsLeased;
  }

  public long rowsAcknowledged() {
    return rowsAcknowledged;
  }

  public long rowsReissued() {
    return rowsReissued;
  }
}
