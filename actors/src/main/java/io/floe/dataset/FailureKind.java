package io.floe.dataset;

import io.floe.arrow.UnsupportedColumnException;
import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;

/** Why a load failed, in the terms a client acts on; the gateway maps each to a Flight status. */
public enum FailureKind {
  /** The request itself is wrong: a bad column, filter, snapshot, name or unsupported type. */
  INVALID_ARGUMENT,
  /** A dataset of that name exists with other settings. */
  ALREADY_EXISTS,
  /** The table, a metadata file or a data file is not there. */
  NOT_FOUND,
  /** The object store refused the node's credentials for the table's files. */
  STORAGE_ACCESS_DENIED,
  /** The node's Arrow memory limit cannot hold the data. */
  RESOURCE_EXHAUSTED,
  /** Anything else: a bug or an unreadable file. */
  INTERNAL;

  public static FailureKind of(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
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
      if (t instanceof UnsupportedColumnException
          || t instanceof ValidationException
          || t instanceof IllegalArgumentException) {
        return INVALID_ARGUMENT;
      }
      if (t instanceof UncheckedIOException && t.getCause() instanceof FileNotFoundException) {
        return NOT_FOUND;
      }
    }
    return INTERNAL;
  }
}
