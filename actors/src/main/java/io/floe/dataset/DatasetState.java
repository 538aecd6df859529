package io.floe.dataset;

/**
 * Where a dataset is in its life; ABSENT answers for names nobody loaded (or that were dropped).
 */
public enum DatasetState {
  ABSENT,
  PLANNING,
  LOADING,
  READY,
  FAILED
}
