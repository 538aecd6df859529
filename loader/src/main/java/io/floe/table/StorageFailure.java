package io.floe.table;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;

/**
 * A table or one of its files could not be read, for a reason the user can act on; the message
 * names the store and the location or catalog. Built by {@link StorageFailures} from the storage
 * SDKs' and catalogs' exceptions, where the store's refusal is classified: {@link
 * ErrorKind#STORAGE_ACCESS_DENIED}, {@link ErrorKind#NOT_FOUND}, {@link
 * ErrorKind#STORAGE_UNAVAILABLE}, {@link ErrorKind#LOCATION_NOT_ALLOWED} ({@link LocationPolicy}),
 * {@link ErrorKind#INVALID_ARGUMENT} (a scheme Floe does not read, a catalog that is not
 * configured) or {@link ErrorKind#UNREADABLE_DATA}.
 */
public final class StorageFailure extends FloeException {
  private static final long serialVersionUID = 1L;

  public StorageFailure(ErrorKind kind, String message, Throwable cause) {
    super(kind, message, cause);
  }
}
