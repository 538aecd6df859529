package io.floe.table;

/**
 * A table or one of its files could not be read, for a reason the user can act on; the message
 * names the store and the location or catalog. Built by {@link StorageFailures} from the storage
 * SDKs' and catalogs' exceptions.
 */
public final class StorageFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why, in the terms clients act on. */
  public enum Reason {
    /** The store or catalog refused the node's credentials, or the node has none. */
    ACCESS_DENIED,
    /** No such bucket, container, object, file, namespace or table. */
    NOT_FOUND,
    /** The store or catalog could not be reached or answered with a server error. */
    UNAVAILABLE,
    /** A location outside the prefixes the node's operator allows (LocationPolicy). */
    LOCATION_NOT_ALLOWED,
    /** A location whose scheme Floe does not read, or a catalog that is not configured. */
    UNSUPPORTED_LOCATION,
    /** A metadata, manifest or data file that exists but cannot be decoded. */
    UNREADABLE
  }

  private final Reason reason;

  public StorageFailure(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
