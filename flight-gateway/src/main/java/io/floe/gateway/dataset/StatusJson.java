package io.floe.gateway.dataset;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.dataset.DatasetStatus;
import io.floe.dataset.RefreshReport;
import io.floe.protocol.Json;
import io.floe.spec.TableSource;

/** The JSON form of a dataset's status, as {@code load}, {@code status}, {@code drop} answer it. */
final class StatusJson {
  private StatusJson() {}

  static ObjectNode of(DatasetStatus status) {
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
    if (status.snapshotId() != null) {
      node.put("snapshot_id", status.snapshotId());
    }
    if (status.secondsToReady() != null) {
      node.put("seconds_to_ready", status.secondsToReady());
    }
    if (!status.decoders().isEmpty()) {
      ObjectNode decoders = node.putObject("decoders");
      status.decoders().forEach(decoders::put);
    }
    if (status.refresh() != null) {
      RefreshReport report = status.refresh();
      ObjectNode refresh = node.putObject("refresh");
      refresh.put("state", report.state());
      refresh.put("from_snapshot", report.fromSnapshot());
      if (report.toSnapshot() != null) {
        refresh.put("to_snapshot", report.toSnapshot());
      }
      refresh.put("slices_kept", report.kept());
      refresh.put("slices_loaded", report.loaded());
      refresh.put("slices_freed", report.freed());
      refresh.put("seconds", report.seconds());
      if (report.failure() != null) {
        ObjectNode error = refresh.putObject("error");
        error.put("kind", report.failure().kind().name());
        error.put("message", report.failure().message());
      }
    }
    if (!status.retained().isEmpty()) {
      ArrayNode retained = node.putArray("retained_layouts");
      for (DatasetStatus.RetainedLayout layout : status.retained()) {
        ObjectNode kept = retained.addObject();
        kept.put("snapshot_id", layout.snapshotId());
        if (layout.fingerprint() != null) {
          kept.put("fingerprint", layout.fingerprint());
        }
        kept.put("slices", layout.slices());
        kept.put("rows", layout.rows());
        layout.heldBy().forEach(kept.putArray("held_by")::add);
      }
    }
    if (status.failure() != null) {
      ObjectNode error = node.putObject("error");
      error.put("kind", status.failure().kind().name());
      error.put("message", status.failure().message());
    }
    return node;
  }
}
