package io.floe.dataset;

import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.spec.DatasetLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One planned snapshot of a dataset and how far its slices have loaded: for each slice in plan
 * order, its last report (kept while it reloads, so its rows stay known) and whether it is held
 * now. A dataset has one such version serving, at most one more loading during a refresh, and older
 * ones that jobs still read. Slices are shared between versions by id, so a refresh loads only the
 * slices its version does not share with another. Not thread-safe: the entity's.
 */
final class DatasetVersion {
  private final ScanPlan plan;
  private final Map<String, Integer> index = new HashMap<>();
  private final SliceEntity.Loaded[] known;
  private final boolean[] present;
  private int knownCount;
  private int presentCount;
  private int dispatched;

  /** The layout's fingerprint, once every slice answered; null until then. */
  private String fingerprint;

  DatasetVersion(ScanPlan plan) {
    this.plan = plan;
    List<SliceSpec> slices = plan.slices();
    this.known = new SliceEntity.Loaded[slices.size()];
    this.present = new boolean[slices.size()];
    for (int i = 0; i < slices.size(); i++) {
      index.put(slices.get(i).sliceId(), i);
    }
  }

  ScanPlan plan() {
    return plan;
  }

  long snapshotId() {
    return plan.snapshotId();
  }

  int size() {
    return known.length;
  }

  boolean contains(String sliceId) {
    return index.containsKey(sliceId);
  }

  SliceSpec spec(String sliceId) {
    Integer at = index.get(sliceId);
    return at == null ? null : plan.slices().get(at);
  }

  List<String> sliceIds() {
    List<String> ids = new ArrayList<>(known.length);
    plan.slices().forEach(s -> ids.add(s.sliceId()));
    return ids;
  }

  /** The report of a slice of this version that is held now, or null. */
  SliceEntity.Loaded heldReport(String sliceId) {
    Integer at = index.get(sliceId);
    return at != null && present[at] ? known[at] : null;
  }

  /** Records a slice's report; false if the slice is not in this version. */
  boolean loaded(SliceEntity.Loaded loaded) {
    Integer at = index.get(loaded.sliceId());
    if (at == null) {
      return false;
    }
    if (known[at] == null) {
      knownCount++;
    } else if (known[at].rows() != loaded.rows()) {
      fingerprint = null; // not expected (a slice id names its content), but never stale
    }
    known[at] = loaded;
    if (!present[at]) {
      present[at] = true;
      presentCount++;
    }
    return true;
  }

  /** Marks a slice that restarted somewhere as missing until it reports again. */
  boolean missing(String sliceId) {
    Integer at = index.get(sliceId);
    if (at == null || !present[at]) {
      return false;
    }
    present[at] = false;
    presentCount--;
    return true;
  }

  /** Whether every slice is held now. */
  boolean complete() {
    return presentCount == known.length;
  }

  /** Whether every slice answered once (some may be reloading now). */
  boolean allKnown() {
    return knownCount == known.length;
  }

  int presentCount() {
    return presentCount;
  }

  /** The next slices to ask to load, keeping at most {@code inFlight} unanswered at once. */
  List<SliceSpec> nextToDispatch(int inFlight) {
    List<SliceSpec> out = new ArrayList<>();
    while (dispatched < known.length && dispatched - knownCount < inFlight) {
      SliceSpec slice = plan.slices().get(dispatched++);
      if (known[index.get(slice.sliceId())] == null) {
        out.add(slice);
      }
    }
    return out;
  }

  /** Dispatched slices not held now, to ask again. */
  List<SliceSpec> missingDispatched() {
    List<SliceSpec> out = new ArrayList<>();
    for (int i = 0; i < dispatched; i++) {
      if (!present[i]) {
        out.add(plan.slices().get(i));
      }
    }
    return out;
  }

  long rows() {
    long rows = 0;
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && present[i]) {
        rows += known[i].rows();
      }
    }
    return rows;
  }

  /** How many held slices each reader decoded (native, vectorized, generic, mixed). */
  Map<String, Integer> decoders() {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && present[i] && known[i].decoder() != null) {
        counts.merge(known[i].decoder(), 1, Integer::sum);
      }
    }
    return counts;
  }

  long bytes() {
    long bytes = 0;
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && present[i]) {
        bytes += known[i].bytes();
      }
    }
    return bytes;
  }

  /**
   * The fingerprint of this version's layout once every slice answered, else null. Computed once:
   * it hashes the schema and every slice's row count, and jobs ask for it with each plan.
   */
  String fingerprint(String name, String rowFilter) {
    if (fingerprint == null && allKnown()) {
      fingerprint = layout(name, rowFilter).fingerprint();
    }
    return fingerprint;
  }

  /** The layout readers plan with; only once every slice answered once. */
  DatasetLayout layout(String name, String rowFilter) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(known.length);
    for (SliceEntity.Loaded slice : known) {
      rows.add(
          new DatasetLayout.SliceRows(
              slice.sliceId(), slice.rows(), slice.bytes(), slice.holder()));
    }
    return new DatasetLayout(name, plan.snapshotId(), rowFilter, plan.arrowSchemaJson(), rows);
  }
}
