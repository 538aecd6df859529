package io.floe.iceberg;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the native libraries that killed JVMs left in the temporary directory. Arrow's JNI
 * loaders unpack their library (76 MB for arrow-dataset) into {@code jnilib-*.tmp} at every start
 * and delete it only at a clean exit, so each killed node leaves one behind: on a pod's {@code
 * /tmp}, which outlives container restarts, a dozen crashes fill it. A file older than a few
 * minutes is one its JVM loaded long ago or one nobody will load; deleting a loaded library's file
 * does not affect the process that mapped it.
 */
final class StaleNativeLibraries {
  private static final Logger LOG = LoggerFactory.getLogger(StaleNativeLibraries.class);

  /** Unpacking and loading take seconds; a file this old is not about to be loaded. */
  static final Duration AGE = Duration.ofMinutes(10);

  private StaleNativeLibraries() {}

  /** Deletes {@code jnilib-*.tmp} files in {@code directory} older than {@code age}. */
  static void remove(Path directory, Duration age) {
    Instant before = Instant.now().minus(age);
    int removed = 0;
    long bytes = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "jnilib-*.tmp")) {
      for (Path file : files) {
        try {
          if (Files.isRegularFile(file)
              && Files.getLastModifiedTime(file).toInstant().isBefore(before)) {
            long size = Files.size(file);
            if (Files.deleteIfExists(file)) {
              removed++;
              bytes += size;
            }
          }
        } catch (IOException e) {
          LOG.debug("Could not remove {}: {}", file, e.toString());
        }
      }
    } catch (IOException e) {
      LOG.debug("Could not list {}: {}", directory, e.toString());
      return;
    }
    if (removed > 0) {
      LOG.info(
          "Removed {} native libraries ({} bytes) that stopped JVMs left in {}",
          removed,
          bytes,
          directory);
    }
  }
}
