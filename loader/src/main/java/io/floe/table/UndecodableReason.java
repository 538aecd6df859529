package io.floe.table;

import java.io.EOFException;
import java.util.zip.ZipException;
import org.apache.hadoop.fs.ChecksumException;

/**
 * Why a file could not be decoded, in general terms ("not valid JSON", "not a Parquet file"), as a
 * reply may say it. The decoders' own messages quote the file: Jackson a token, Iceberg a field's
 * value, Parquet the bytes where it looked for its magic number, Hadoop a checksum of the content.
 * Those stay in the node's log.
 */
final class UndecodableReason {
  private UndecodableReason() {}

  static String of(Throwable error) {
    // The first exception in the chain that says what the file is not; Jackson's errors are
    // IOExceptions too, so only when none does is it a reading failure.
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String type = t.getClass().getName();
      if (t instanceof ChecksumException) {
        return "its content does not match the checksum kept beside it (.crc)";
      }
      if (type.startsWith("com.fasterxml.jackson.core.")) {
        return "not valid JSON";
      }
      if (type.startsWith("org.apache.avro.")
          || type.startsWith("org.apache.iceberg.shaded.org.apache.avro.")) {
        return "not a valid Avro file";
      }
      if (type.startsWith("org.apache.parquet.")
          || String.valueOf(t.getMessage()).contains("is not a Parquet file")) {
        return "not a Parquet file, or a damaged one";
      }
      if (t instanceof ZipException) {
        return "not compressed as its name says";
      }
      if (t instanceof EOFException) {
        return "it ends early (truncated)";
      }
    }
    return "reading it failed (" + innermost(error).getClass().getSimpleName() + ")";
  }

  private static Throwable innermost(Throwable error) {
    Throwable root = error;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }
}
