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
 * order, its last report (kept while it reloads, so its rows stay known) and which of its copies
 * are held now. A dataset has one such version serving, at most one more loading during a refresh,
 * and older ones that jobs still read. Slices are shared between versions by id, so a refresh loads
 * only the slices its version does not share with another. Not thread-safe: the entity's.
 *
 * <p>A slice is whole when every copy ({@code replicas} of them, on different nodes) is held; it
 * can be read while any copy is.
 */
final class DatasetVersion {
  /** A copy of a slice to ask to load again. */
  record Copy(SliceSpec spec, String entityId) {}

  private final ScanPlan plan;
  private final int replicas;
  private final Map<String, Integer> index = new HashMap<>();
  private final SliceEntity.Loaded[] known;
  private final SliceEntity.Loaded[][] held;
  private int knownCount;
  private int wholeCount;
  private int dispatched;

  /** The layout's fingerprint, once every slice answered; null until then. */
  private String fingerprint;

  DatasetVersion(ScanPlan plan, int replicas) {
    this.plan = plan;
    this.replicas = replicas;
    List<SliceSpec> slices = plan.slices();
    this.known = new SliceEntity.Loaded[slices.size()];
    this.held = new SliceEntity.Loaded[slices.size()][replicas];
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

  /** The reports of the copies of a slice of this version that are held now. */
  List<SliceEntity.Loaded> heldReports(String sliceId) {
    Integer at = index.get(sliceId);
    List<SliceEntity.Loaded> out = new ArrayList<>();
    if (at != null) {
      for (SliceEntity.Loaded copy : held[at]) {
        if (copy != null) {
          out.add(copy);
        }
      }
    }
    return out;
  }

  /** Records a copy's report; false if the slice is not in this version. */
  boolean loaded(SliceEntity.Loaded loaded) {
    Integer at = index.get(loaded.sliceId());
    if (at == null || loaded.copy() >= replicas) {
      return false;
    }
    if (known[at] == null) {
      knownCount++;
    } else if (known[at].rows() != loaded.rows()) {
      fingerprint = null; // not expected (a slice id names its content), but never stale
    }
    known[at] = loaded;
    boolean wasWhole = whole(at);
    held[at][loaded.copy()] = loaded;
    if (!wasWhole && whole(at)) {
      wholeCount++;
    }
    return true;
  }

  /** Marks a copy that restarted somewhere as missing until it reports again. */
  boolean missing(String sliceId, int copy) {
    Integer at = index.get(sliceId);
    if (at == null || copy >= replicas || held[at][copy] == null) {
      return false;
    }
    if (whole(at)) {
      wholeCount--;
    }
    held[at][copy] = null;
    return true;
  }

  private boolean whole(int at) {
    for (SliceEntity.Loaded copy : held[at]) {
      if (copy == null) {
        return false;
      }
    }
    return true;
  }

  private boolean readable(int at) {
    for (SliceEntity.Loaded copy : held[at]) {
      if (copy != null) {
        return true;
      }
    }
    return false;
  }

  /** Whether every copy of every slice is held now. */
  boolean complete() {
    return wholeCount == known.length;
  }

  /** Whether every slice answered once (some may be reloading now). */
  boolean allKnown() {
    return knownCount == known.length;
  }

  /** Slices all of whose copies are held. */
  int presentCount() {
    return wholeCount;
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

  /** Copies of dispatched slices not held now, to ask again. */
  List<Copy> missingDispatched() {
    List<Copy> out = new ArrayList<>();
    for (int i = 0; i < dispatched; i++) {
      for (int copy = 0; copy < replicas; copy++) {
        if (held[i][copy] == null) {
          SliceSpec spec = plan.slices().get(i);
          out.add(new Copy(spec, SliceCopies.entityId(spec.sliceId(), copy)));
        }
      }
    }
    return out;
  }

  /** Rows of the slices that can be read now. */
  long rows() {
    long rows = 0;
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && readable(i)) {
        rows += known[i].rows();
      }
    }
    return rows;
  }

  /** How many readable slices each reader decoded (native, vectorized, generic, mixed). */
  Map<String, Integer> decoders() {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && readable(i) && known[i].decoder() != null) {
        counts.merge(known[i].decoder(), 1, Integer::sum);
      }
    }
    return counts;
  }

  /** Arrow bytes of every copy held now (a slice of two replicas counts twice). */
  long bytes() {
    long bytes = 0;
    for (SliceEntity.Loaded[] copies : held) {
      for (SliceEntity.Loaded copy : copies) {
        if (copy != null) {
          bytes += copy.bytes();
        }
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

  /**
   * The layout readers plan with; only once every slice answered once. A slice's holder is its
   * first copy held now (the last one known when none is) and its standbys the nodes of the other
   * copies held.
   */
  DatasetLayout layout(String name, String rowFilter) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(known.length);
    for (int i = 0; i < known.length; i++) {
      List<String> holders = new ArrayList<>(replicas);
      for (SliceEntity.Loaded copy : held[i]) {
        if (copy != null && !holders.contains(copy.holder())) {
          holders.add(copy.holder());
        }
      }
      if (holders.isEmpty()) {
        holders.add(known[i].holder());
      }
      rows.add(
          new DatasetLayout.SliceRows(
              known[i].sliceId(),
              known[i].rows(),
              known[i].bytes(),
              holders.get(0),
              holders.subList(1, holders.size())));
    }
    return new DatasetLayout(name, plan.snapshotId(), rowFilter, plan.arrowSchemaJson(), rows);
  }
}
