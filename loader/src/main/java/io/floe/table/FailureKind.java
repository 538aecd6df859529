package io.floe.table;

import io.floe.spec.InvalidSpecException;
import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;

/** Why a load failed, in the terms a client acts on; the gateway maps each to a Flight status. */
public enum FailureKind {
  /** The request itself is wrong: a bad column, filter, snapshot, name or unsupported type. */
  INVALID_ARGUMENT,
  /** A dataset of that name exists with other settings. */
  ALREADY_EXISTS,
  /** The table, a metadata file or a data file is not there. */
  NOT_FOUND,
  /** No dataset of that name (never loaded, or dropped). */
  DATASET_NOT_FOUND,
  /** No job of that id: never registered, dropped, or lost with its node. */
  JOB_NOT_FOUND,
  /** A dynamic-mode lease the job does not know. */
  LEASE_NOT_FOUND,
  /** A location outside the ones the node's operator allows. */
  LOCATION_NOT_ALLOWED,
  /** The caller may not change it: another tenant owns the dataset, another caller the job. */
  NOT_OWNER,
  /** The object store or catalog refused the node's credentials (or it has none). */
  STORAGE_ACCESS_DENIED,
  /** The object store or catalog could not be reached, or failed; trying later may work. */
  STORAGE_UNAVAILABLE,
  /** A metadata, manifest or data file exists but cannot be decoded; the message names it. */
  UNREADABLE_DATA,
  /** The node's Arrow memory limit cannot hold the data. */
  RESOURCE_EXHAUSTED,
  /** Anything else: a failure of the node's own, logged with its stack trace. */
  INTERNAL;

  public static FailureKind of(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof StorageFailure storage) {
        return switch (storage.reason()) {
          case ACCESS_DENIED -> STORAGE_ACCESS_DENIED;
          case NOT_FOUND -> NOT_FOUND;
          case UNAVAILABLE -> STORAGE_UNAVAILABLE;
          case UNSUPPORTED_LOCATION -> INVALID_ARGUMENT;
          case LOCATION_NOT_ALLOWED -> LOCATION_NOT_ALLOWED;
          case UNREADABLE -> UNREADABLE_DATA;
        };
      }
      if (t instanceof OutOfMemoryException || t instanceof OutOfMemoryError) {
        return RESOURCE_EXHAUSTED;
      }
      if (t instanceof java.nio.file.AccessDeniedException) {
        return STORAGE_ACCESS_DENIED;
      }
      if (t instanceof NotFoundException
          || t instanceof NoSuchTableException
          || t instanceof FileNotFoundException) {
        return NOT_FOUND;
      }
      if (t instanceof InvalidSpecException) {
        // Only what Floe's own checks refused is the caller's: an IllegalArgumentException from
        // inside Iceberg, Parquet or Arrow is the node failing on a valid request.
        return INVALID_ARGUMENT;
      }
      if (t instanceof UncheckedIOException && t.getCause() instanceof FileNotFoundException) {
        return NOT_FOUND;
      }
    }
    return INTERNAL;
  }
}
