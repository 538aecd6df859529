package io.floe.gateway.job;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.EpochProgress;
import io.floe.job.JobRecord;
import io.floe.job.JobStatus;
import io.floe.protocol.JobRequest;

/** A job's status in its wire form (see docs/protocol.md, "Training jobs"). */
final class JobStatusJson {
  private JobStatusJson() {}

  static ObjectNode of(JobStatus status) {
    ObjectNode node = JobRequest.toJson(status.spec());
    node.put("epoch", status.epoch());
    node.put("rows", status.layout().rows());
    node.put("snapshot_id", status.layout().snapshotId());
    node.put("layout", status.layout().fingerprint());
    node.put("batches_per_epoch", status.batchesPerEpoch());
    ArrayNode layouts = node.putArray("layouts");
    for (JobRecord.EpochLayout at : status.layouts()) {
      ObjectNode layout = layouts.addObject();
      layout.put("from_epoch", at.fromEpoch());
      layout.put("layout", at.layout().fingerprint());
      layout.put("snapshot_id", at.layout().snapshotId());
      layout.put("rows", at.layout().rows());
    }
    ObjectNode counters = node.putObject("counters");
    counters.put("rows_leased", status.rowsLeased());
    counters.put("rows_acknowledged", status.rowsAcknowledged());
    counters.put("rows_reissued", status.rowsReissued());
    counters.put("leases_active", status.leasesActive());
    ArrayNode epochs = node.putArray("epochs");
    for (EpochProgress progress : status.epochs()) {
      ObjectNode epoch = epochs.addObject();
      epoch.put("epoch", progress.epoch());
      epoch.put("batches", progress.batches());
      epoch.put("pending", progress.pending());
      epoch.put("leased", progress.leased());
      epoch.put("acknowledged", progress.acknowledged());
    }
    return node;
  }
}
