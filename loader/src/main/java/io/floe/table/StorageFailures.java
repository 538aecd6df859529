package io.floe.table;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.util.Excerpt;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.exceptions.ServiceFailureException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * Turns what object stores, their SDKs and catalogs throw into a {@link StorageFailure} whose
 * message says what was refused or missing, by which store, for which location: refused
 * credentials, a missing bucket, object or table, an unreachable endpoint, a file that cannot be
 * decoded (said in general terms, {@link UndecodableReason}: a decoder's message may quote the
 * file). Errors that are none of these are left as they are.
 */
public final class StorageFailures {
  private static final Logger LOG = LoggerFactory.getLogger(StorageFailures.class);

  private StorageFailures() {}

  /**
   * {@code error} as a storage failure about {@code what} (e.g. "data file s3://b/t/f.parquet"), or
   * {@code error} itself when it is not about storage.
   */
  public static RuntimeException translate(Throwable error, String what) {
    if (error instanceof FloeException known) {
      return known;
    }
    FloeException failure = classify(error, what, false);
    if (failure != null) {
      return failure;
    }
    return error instanceof RuntimeException runtime
        ? runtime
        : new java.io.UncheckedIOException(what + ": " + error.getMessage(), asIo(error));
  }

  /**
   * Like {@link #translate}, but a failure to decode ({@code IOException}, a Parquet, Avro or JSON
   * error) is also one: for the places where every byte read belongs to one known file.
   */
  public static RuntimeException translateReading(Throwable error, String what) {
    if (error instanceof FloeException known) {
      return known;
    }
    FloeException failure = classify(error, what, true);
    if (failure != null) {
      return failure;
    }
    return error instanceof RuntimeException runtime ? runtime : new RuntimeException(error);
  }

  private static FloeException classify(Throwable error, String what, boolean decoding) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof FloeException known) {
        return known; // classified where it was thrown, e.g. by FloeFileIO inside Iceberg's reads
      }
      StorageFailure found = aws(t, what);
      if (found == null) {
        found = catalog(t, what);
      }
      if (found == null) {
        found = byHttpStatus(t, what);
      }
      if (found == null) {
        found = plain(t, what);
      }
      if (found != null) {
        return found;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    if (isConnectionFailure(error)) {
      // A catalog client (Hive's Thrift, Nessie's HTTP, JDBC) that says so only in its messages.
      return new StorageFailure(
          ErrorKind.STORAGE_UNAVAILABLE, "Cannot reach " + what + ": " + rootMessage(error), error);
    }
    if (decoding && isDecodingFailure(error)) {
      // The decoder's own message may quote the file: only the node's log has it.
      LOG.debug("Cannot decode {}", what, error);
      return new StorageFailure(
          ErrorKind.UNREADABLE_DATA,
          "Cannot decode " + what + ": " + UndecodableReason.of(error),
          error);
    }
    return null;
  }

  private static StorageFailure aws(Throwable t, String what) {
    if (t instanceof AwsServiceException aws) {
      int status = aws.statusCode();
      String code = aws.awsErrorDetails() == null ? null : aws.awsErrorDetails().errorCode();
      String detail = "(" + status + (code == null ? "" : " " + code) + ")";
      if (status == 403 || status == 401) {
        return new StorageFailure(
            ErrorKind.STORAGE_ACCESS_DENIED,
            "S3 refused the node's credentials "
                + detail
                + " for "
                + what
                + "; check the access key and secret (floe.storage.s3, or the catalog's s3.*"
                + " properties) or the role the node runs as",
            t);
      }
      if (status == 404 || "NoSuchBucket".equals(code) || "NoSuchKey".equals(code)) {
        String bucket = "NoSuchBucket".equals(code) ? "no such bucket" : "no such bucket or object";
        return new StorageFailure(
            ErrorKind.NOT_FOUND,
            "Not found in S3 " + detail + ": " + what + " (" + bucket + ")",
            t);
      }
      if (status == 301 || "PermanentRedirect".equals(code)) {
        return new StorageFailure(
            ErrorKind.INVALID_ARGUMENT,
            "S3 answered that the bucket of "
                + what
                + " is in another region "
                + detail
                + "; set client.region (floe.storage.s3.region / AWS_REGION) to the bucket's region",
            t);
      }
      if (status >= 500) {
        return new StorageFailure(
            ErrorKind.STORAGE_UNAVAILABLE,
            "S3 failed " + detail + " reading " + what + ": " + aws.getMessage(),
            t);
      }
    }
    if (t instanceof SdkClientException client) {
      String message = String.valueOf(client.getMessage());
      if (message.contains("Unable to load credentials")) {
        return new StorageFailure(
            ErrorKind.STORAGE_ACCESS_DENIED,
            "No AWS credentials for "
                + what
                + ": none configured (floe.storage.s3.access-key/secret-key) and none found by"
                + " the AWS default chain (environment, profile, web identity, pod identity,"
                + " instance role): "
                + firstLine(message),
            t);
      }
      if (message.contains("Unable to load region")) {
        return new StorageFailure(
            ErrorKind.INVALID_ARGUMENT,
            "No AWS region for " + what + ": set client.region or AWS_REGION",
            t);
      }
      if (isConnectionFailure(client)) {
        return new StorageFailure(
            ErrorKind.STORAGE_UNAVAILABLE,
            "Cannot reach S3 for " + what + ": " + rootMessage(client),
            t);
      }
    }
    return null;
  }

  private static StorageFailure catalog(Throwable t, String what) {
    if (t instanceof NotAuthorizedException || t instanceof ForbiddenException) {
      return new StorageFailure(
          ErrorKind.STORAGE_ACCESS_DENIED,
          "The catalog refused the node's credentials for " + what + ": " + t.getMessage(),
          t);
    }
    if (t instanceof NoSuchTableException || t instanceof NoSuchNamespaceException) {
      return new StorageFailure(
          ErrorKind.NOT_FOUND, "Not found: " + what + " (" + naming(t) + ")", t);
    }
    if (t instanceof ServiceUnavailableException || t instanceof ServiceFailureException) {
      return new StorageFailure(
          ErrorKind.STORAGE_UNAVAILABLE,
          "The catalog failed for " + what + ": " + t.getMessage(),
          t);
    }
    if (t instanceof RESTException && isConnectionFailure(t)) {
      return new StorageFailure(
          ErrorKind.STORAGE_UNAVAILABLE,
          "Cannot reach the catalog for " + what + ": " + rootMessage(t),
          t);
    }
    return null;
  }

  /**
   * Google Cloud Storage ({@code BaseServiceException.getCode()}) and Azure ({@code
   * HttpResponseException.getResponse().getStatusCode()}) errors by their HTTP status, looked up by
   * name so those SDKs stay optional at compile time.
   */
  private static StorageFailure byHttpStatus(Throwable t, String what) {
    String store;
    Integer status;
    if (isA(t, "com.google.cloud.BaseServiceException")) {
      store = "Google Cloud Storage";
      status = (Integer) call(t, "getCode");
    } else if (isA(t, "com.azure.core.exception.HttpResponseException")) {
      store = "Azure Storage";
      Object response = call(t, "getResponse");
      status = response == null ? null : (Integer) call(response, "getStatusCode");
    } else {
      return null;
    }
    if (status == null || status <= 0) {
      return isConnectionFailure(t)
          ? new StorageFailure(
              ErrorKind.STORAGE_UNAVAILABLE,
              "Cannot reach " + store + " for " + what + ": " + rootMessage(t),
              t)
          : null;
    }
    if (status == 401 || status == 403) {
      return new StorageFailure(
          ErrorKind.STORAGE_ACCESS_DENIED,
          store
              + " refused the node's credentials ("
              + status
              + ") for "
              + what
              + ": "
              + firstLine(t.getMessage()),
          t);
    }
    if (status == 404) {
      return new StorageFailure(
          ErrorKind.NOT_FOUND,
          "Not found in " + store + " (404): " + what + " (no such bucket, container or object)",
          t);
    }
    if (status >= 500) {
      return new StorageFailure(
          ErrorKind.STORAGE_UNAVAILABLE,
          store + " failed (" + status + ") for " + what + ": " + firstLine(t.getMessage()),
          t);
    }
    return null;
  }

  private static StorageFailure plain(Throwable t, String what) {
    if (t instanceof NotFoundException
        || t instanceof FileNotFoundException
        || t instanceof NoSuchFileException) {
      return new StorageFailure(
          ErrorKind.NOT_FOUND, "Not found: " + what + " (" + naming(t) + ")", t);
    }
    if (t instanceof AccessDeniedException) {
      return new StorageFailure(
          ErrorKind.STORAGE_ACCESS_DENIED, "Access denied to " + what + ": " + naming(t), t);
    }
    if (t instanceof ConnectException || t instanceof UnknownHostException) {
      return new StorageFailure(
          ErrorKind.STORAGE_UNAVAILABLE, "Cannot reach the store of " + what + ": " + t, t);
    }
    return null;
  }

  /**
   * The message of an exception about a missing or refused file or table, which names it again (the
   * caller's location or identifier, up to 4,096 characters): quoted as any caller's value.
   */
  private static String naming(Throwable t) {
    return Excerpt.location(t.getMessage());
  }

  private static boolean isConnectionFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof UnknownHostException
          || t instanceof SocketTimeoutException
          || t instanceof java.net.http.HttpConnectTimeoutException
          || t instanceof java.net.NoRouteToHostException) {
        return true;
      }
      String message = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
      if (message.contains("connection refused")
          || message.contains("unable to execute http")
          || message.contains("could not connect to meta store")) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static boolean isDecodingFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      String type = t.getClass().getName();
      if (t instanceof IOException
          || t instanceof java.io.UncheckedIOException
          || t instanceof org.apache.iceberg.exceptions.RuntimeIOException
          || type.startsWith("org.apache.parquet.")
          || type.startsWith("org.apache.avro.")
          || type.startsWith("org.apache.iceberg.shaded.org.apache.avro.")
          || type.startsWith("com.fasterxml.jackson.core.")
          || String.valueOf(t.getMessage()).contains("is not a Parquet file")) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static boolean isA(Object object, String className) {
    for (Class<?> c = object.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals(className)) {
        return true;
      }
    }
    return false;
  }

  private static Object call(Object target, String method) {
    try {
      Method m = target.getClass().getMethod(method);
      return m.invoke(target);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  static String rootMessage(Throwable error) {
    Throwable root = error;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    return firstLine(message == null ? root.getClass().getSimpleName() : message);
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    return line.length() > 500 ? line.substring(0, 500) + "..." : line;
  }

  private static IOException asIo(Throwable error) {
    return error instanceof IOException io ? io : new IOException(error);
  }
}
