package io.floe.job;

/** A job's running totals of rows leased, acknowledged and re-issued, over all its epochs. */
final class JobCounters {
  private long rowsLeased;
  private long rowsAcknowledged;
  private long rowsReissued;

  void leased(long rows) {
    rowsLeased += rows;
  }

  void acknowledged(long rows) {
    rowsAcknowledged += rows;
  }

  void reissued(long rows) {
    rowsReissued += rows;
  }

  long rowsLeased() {
    return rowsLeased;
  }

  long rowsAcknowledged() {
    return rowsAcknowledged;
  }

  long rowsReissued() {
    return rowsReissued;
  }
}
