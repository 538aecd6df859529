package io.floe.initializer;

import io.floe.protocol.DatasetStatusReply;
import java.time.Duration;
import java.util.Locale;

/** One line of a load's progress, for a log a person reads while the TrainJob waits. */
final class LoadProgress {
  private LoadProgress() {}

  static String describe(String dataset, DatasetStatusReply status, Duration elapsed) {
    long loaded = status.slicesLoaded();
    long total = status.slicesTotal();
    String line =
        String.format(
            Locale.ROOT,
            "Dataset '%s' %s: %d/%d slices, %,d rows, %s",
            dataset,
            status.state(),
            loaded,
            total,
            status.rows(),
            bytes(status.bytes()));
    if (loaded > 0 && total > loaded) {
      long remaining = elapsed.toMillis() * (total - loaded) / loaded;
      line += String.format(Locale.ROOT, ", about %d s left", Math.max(1, remaining / 1000));
    }
    return line;
  }

  static String bytes(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String units = "KMGTPE";
    int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10;
    return String.format(
        Locale.ROOT, "%.1f %siB", bytes / (double) (1L << (10 * unit)), units.charAt(unit - 1));
  }
}
