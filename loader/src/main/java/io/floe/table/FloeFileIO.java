package io.floe.table;

import io.floe.error.ErrorKind;
import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.ResolvingFileIO;

/**
 * Iceberg's {@link ResolvingFileIO} (S3FileIO for {@code s3://}, {@code s3a://} and {@code s3n://};
 * GCSFileIO for {@code gs://}; ADLSFileIO for {@code abfs(s)://} and {@code wasb(s)://}; Hadoop's
 * local file system for {@code file:} and plain paths), refusing every other scheme: a table's
 * metadata names the files the node reads, and a path such as {@code http://...} or {@code
 * hdfs://...} must not make the node reach somewhere else. Used for tables named by location and,
 * as their default {@code io-impl}, for catalogs.
 *
 * <p>Confined ({@link #confine}), it asks its {@link LocationPolicy} before every file it would
 * open, write, list or delete: Iceberg reaches every file of a table (metadata, manifest lists,
 * manifests, data and delete files) through a FileIO, so this is the one place a file outside the
 * allowed locations could be reached.
 */
public class FloeFileIO extends ResolvingFileIO {
  /** Which locations it reads: any, unless a node confines it ({@link #confine}). */
  private volatile LocationPolicy policy = LocationPolicy.any();

  /** Reads only what {@code policy} allows from now on. */
  public void confine(LocationPolicy policy) {
    this.policy = policy;
  }

  /** Schemes this FileIO reads, in the order error messages list them. */
  public static final List<String> SCHEMES =
      List.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "file");

  /**
   * @throws StorageFailure INVALID_ARGUMENT for any scheme but {@link #SCHEMES}
   */
  public static void checkScheme(String location) {
    String scheme = scheme(location);
    if (scheme != null && !SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
      throw new StorageFailure(
          ErrorKind.INVALID_ARGUMENT,
          String.format(
              "Unsupported location '%s': Floe reads %s and local paths",
              Excerpt.location(location),
              String.join(
                  ", ", SCHEMES.stream().map(s -> s + (s.equals("file") ? ":" : "://")).toList())),
          null);
    }
  }

  /**
   * A plain local path as the absolute, normalized {@code file:} location Floe reads (Hadoop would
   * otherwise resolve it against fs.defaultFS).
   */
  static String fileLocation(String path) {
    return "file:" + java.nio.file.Path.of(path).toAbsolutePath().normalize();
  }

  /** The scheme before ':', or null for a plain path. */
  static String scheme(String location) {
    int colon = location.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    for (int i = 0; i < colon; i++) {
      char c = location.charAt(i);
      if (!(Character.isLetterOrDigit(c) || c == '+' || c == '-' || c == '.')) {
        return null; // a colon inside a path, not a scheme
      }
    }
    return location.substring(0, colon);
  }

  @Override
  public InputFile newInputFile(String location) {
    checkScheme(location);
    policy.check(location);
    return super.newInputFile(location);
  }

  @Override
  public InputFile newInputFile(String location, long length) {
    checkScheme(location);
    policy.check(location);
    return super.newInputFile(location, length);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    checkScheme(location);
    policy.check(location);
    return super.newOutputFile(location);
  }

  @Override
  public void deleteFile(String location) {
    checkScheme(location);
    policy.check(location);
    super.deleteFile(location);
  }

  @Override
  public void deleteFiles(Iterable<String> locations) throws BulkDeletionFailureException {
    List<String> checked = new ArrayList<>();
    for (String location : locations) { // once: the iterable may be one-shot
      checkScheme(location);
      policy.check(location);
      checked.add(location);
    }
    super.deleteFiles(checked);
  }

  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    checkScheme(prefix);
    policy.check(prefix);
    return super.listPrefix(prefix);
  }

  @Override
  public void deletePrefix(String prefix) {
    checkScheme(prefix);
    policy.check(prefix);
    super.deletePrefix(prefix);
  }
}
