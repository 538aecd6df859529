package io.floe.dataset;

/**
 * Where a dataset is in its life; ABSENT answers for names nobody loaded (or that were dropped).
 */
public enum DatasetState {
  ABSENT,
  PLANNING,
  LOADING,
  READY,
  /** Every slice was loaded once, but some are being reloaded after their node left or failed. */
  DEGRADED,
  FAILED
}
