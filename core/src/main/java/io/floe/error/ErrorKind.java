package io.floe.error;

/**
 * Why something Floe was asked to do failed, in the terms a client acts on: one kind per failure,
 * chosen where the failure is found (the loader classifying a store's refusal, a spec or filter
 * check, an entity refusing) and carried by a {@link FloeException}. The wire sends each kind as
 * one error code (protocol's {@code ErrorCode.of(ErrorKind)}); anything that is not a {@link
 * FloeException} is {@link #INTERNAL}.
 *
 * <p>The constants' names are persisted (a dataset's FAILED record in {@code floe.state.dir}) and
 * replicated: rename none.
 */
public enum ErrorKind {
  /** The request itself is wrong: a bad column, filter, snapshot, name or unsupported type. */
  INVALID_ARGUMENT(false, true),
  /** A dataset or job of that name exists with other settings. */
  ALREADY_EXISTS(false, true),
  /** The table, a metadata file or a data file is not there. */
  NOT_FOUND(false, true),
  /** No dataset of that name (never loaded, or dropped). */
  DATASET_NOT_FOUND(false, true),
  /** No job of that id: never registered, dropped, or lost with its node. */
  JOB_NOT_FOUND(false, true),
  /** A dynamic-mode lease the job does not know. */
  LEASE_NOT_FOUND(false, true),
  /** A location outside the ones the node's operator allows. */
  LOCATION_NOT_ALLOWED(false, true),
  /** The caller may not change it: another tenant owns the dataset, another caller the job. */
  NOT_OWNER(false, true),
  /** The object store or catalog refused the node's credentials (or it has none). */
  STORAGE_ACCESS_DENIED(false, false),
  /** The object store or catalog could not be reached, or failed; trying later may work. */
  STORAGE_UNAVAILABLE(true, false),
  /** A metadata, manifest or data file exists but cannot be decoded; the message names it. */
  UNREADABLE_DATA(false, false),
  /** The node's Arrow memory limit cannot hold the data. */
  RESOURCE_EXHAUSTED(false, false),
  /**
   * Anything else: a failure of the node's own, logged with its stack trace. Possibly passing (a
   * node failing mid-call), so worth one more try.
   */
  INTERNAL(true, false);

  private final boolean retryable;
  private final boolean callersFault;

  ErrorKind(boolean retryable, boolean callersFault) {
    this.retryable = retryable;
    this.callersFault = callersFault;
  }

  /** Whether trying again, unchanged and after a back-off, can succeed. */
  public boolean retryable() {
    return retryable;
  }

  /**
   * Whether the caller must change the request (or its credentials' tenant) for it to succeed; the
   * node's operator, the store and the node itself are not the caller.
   */
  public boolean callersFault() {
    return callersFault;
  }
}
