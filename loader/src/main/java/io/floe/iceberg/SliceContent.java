package io.floe.iceberg;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;

/**
 * A digest of what a slice holds: its row groups (file, byte range), the delete files that apply to
 * them, the residual filter, and how the rows are served (schema, filter, name mapping, batch
 * rows). Two plans, of the same snapshot or of two snapshots, give one slice the same key exactly
 * when it would decode to the same batches.
 */
final class SliceContent {
  private SliceContent() {}

  static String key(
      List<FileScanTask> tasks,
      String schemaJson,
      String filterJson,
      String nameMapping,
      int batchRows) {
    StringBuilder canonical =
        new StringBuilder()
            .append(schemaJson)
            .append('\n')
            .append(filterJson)
            .append('\n')
            .append(nameMapping)
            .append('\n')
            .append(batchRows);
    for (FileScanTask task : tasks) {
      canonical
          .append('\n')
          .append(task.file().location())
          .append(' ')
          .append(task.start())
          .append(' ')
          .append(task.length())
          .append(' ')
          .append(task.residual());
      // Iceberg lists a task's delete files in no fixed order.
      List<String> deletes = new ArrayList<>();
      for (DeleteFile delete : task.deletes()) {
        deletes.add(delete.content() + " " + delete.location());
      }
      deletes.sort(null);
      deletes.forEach(d -> canonical.append("\n  ").append(d));
    }
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest(canonical.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 10);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }
}
