package io.floe.job;

/** A job's running totals of rows leased, acknowledged and re-issued, over all its epochs. */
public final class JobCounters {
  private long rowsLeased;
  private long rowsAcknowledged;
  private long rowsReissued;

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
