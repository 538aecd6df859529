package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.dataset.DatasetStatus;
import io.floe.table.TableSource;

/** The JSON form of a dataset's status, as {@code load}, {@code status}, {@code drop} answer it. */
public final class StatusJson {
  private StatusJson() {}

  public static ObjectNode of(DatasetStatus status) {
    ObjectNode node = Json.object();
    node.put("name", status.name());
    node.put("state", status.state().name());
    if (status.source() instanceof TableSource.InCatalog inCatalog) {
      ObjectNode source = node.putObject("source");
      source.put("catalog", inCatalog.catalog());
      source.put("table", inCatalog.identifier());
    } else if (status.source() instanceof TableSource.AtLocation atLocation) {
      node.putObject("source").put("location", atLocation.location());
    }
    node.put("slices_loaded", status.slicesLoaded());
    node.put("slices_total", status.slicesTotal());
    node.put("rows", status.rows());
    node.put("bytes", status.bytes());
    if (status.snapshotId() >= 0) {
      node.put("snapshot_id", status.snapshotId());
    }
    if (status.secondsToReady() >= 0) {
      node.put("seconds_to_ready", status.secondsToReady());
    }
    if (status.failure() != null) {
      ObjectNode error = node.putObject("error");
      error.put("kind", status.failure().kind().name());
      error.put("message", status.failure().message());
    }
    return node;
  }
}
