package io.floe.spec;

import io.floe.serialization.CborSerializable;
import io.floe.util.Preconditions;
import java.util.List;

/**
 * A READY dataset's rows in global order: slices in plan order with their row counts. The global
 * row index is the prefix sum of slice rows, so a contiguous global range maps to whole slices plus
 * at most a partial slice at each end.
 */
public record DatasetLayout(
    String name, long snapshotId, String rowFilter, String arrowSchemaJson, List<SliceRows> slices)
    implements CborSerializable {

  /**
   * One slice: its id, rows, Arrow bytes, the Flight location of its holder and those of the other
   * nodes that hold a copy of it (a dataset of several replicas), which readers switch to when the
   * holder fails.
   */
  public record SliceRows(
      String sliceId, long rows, long bytes, String holder, List<String> standbys)
      implements CborSerializable {
    @com.fasterxml.jackson.annotation.JsonCreator
    public SliceRows {
      // A layout recorded before replicas existed has none.
      standbys = standbys == null ? List.of() : List.copyOf(standbys);
    }

    /** A slice held by one node only. */
    public SliceRows(String sliceId, long rows, long bytes, String holder) {
      this(sliceId, rows, bytes, holder, List.of());
    }

    /** Every node holding a copy: the holder first, then the standbys. */
    public List<String> holders() {
      List<String> all = new java.util.ArrayList<>(1 + standbys.size());
      all.add(holder);
      all.addAll(standbys);
      return all;
    }
  }

  /** A part of one slice: rows {@code [from, to)} relative to the slice's first row. */
  public record SlicePart(String sliceId, long from, long to, String holder) {
    public long rows() {
      return to - from;
    }
  }

  public DatasetLayout {
    slices = List.copyOf(slices);
  }

  public long rows() {
    return slices.stream().mapToLong(SliceRows::rows).sum();
  }

  /** The index of slice {@code sliceId} in plan order, or -1 if the layout has no such slice. */
  public int indexOf(String sliceId) {
    for (int i = 0; i < slices.size(); i++) {
      if (slices.get(i).sliceId().equals(sliceId)) {
        return i;
      }
    }
    return -1;
  }

  /** Each slice's rows, in plan order. */
  public long[] sliceRowCounts() {
    return slices.stream().mapToLong(SliceRows::rows).toArray();
  }

  /**
   * A short digest of what fixes the global row order: the dataset, its snapshot, row filter and
   * schema, and every slice's rows in plan order. Not where slices are held, and not the load
   * generation in slice ids, so a dataset loaded again from the same snapshot and spec (after a
   * drop or a whole-cluster restart) keeps its fingerprint, and its jobs and saved resumption
   * states stay valid. Equal fingerprints mean equal global orders of the same rows; the filter is
   * in it because two filters can leave every slice with the same number of other rows.
   */
  public String fingerprint() {
    try {
      java.security.MessageDigest digest = java.security.MessageDigest.getInstance("SHA-256");
      StringBuilder canonical =
          new StringBuilder()
              .append(name)
              .append('\n')
              .append(snapshotId)
              .append('\n')
              .append(rowFilter)
              .append('\n')
              .append(arrowSchemaJson);
      for (SliceRows slice : slices) {
        canonical.append('\n').append(slice.rows());
      }
      byte[] hash =
          digest.digest(canonical.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(hash, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }

  public long bytes() {
    return slices.stream().mapToLong(SliceRows::bytes).sum();
  }

  /** The global rows of shard {@code index} of {@code count}: contiguous, sizes differ by ≤ 1. */
  public long[] shardRange(int index, int count) {
    Preconditions.checkArgument(count > 0, "Invalid shard count: %s (must be > 0)", count);
    Preconditions.checkArgument(
        index >= 0 && index < count,
        "Invalid shard index: %s (must be in 0..%s for shard count %s)",
        index,
        count - 1,
        count);
    long total = rows();
    return new long[] {total * index / count, total * (index + 1) / count};
  }

  /**
   * The slice parts covering global rows {@code [from, to)}, in order; empty slices are skipped.
   */
  public List<SlicePart> parts(long from, long to) {
    Preconditions.checkArgument(
        0 <= from && from <= to && to <= rows(),
        "Invalid row range [%s, %s) for dataset '%s' of %s rows",
        from,
        to,
        name,
        rows());
    List<SlicePart> parts = new java.util.ArrayList<>();
    long start = 0;
    for (SliceRows slice : slices) {
      long end = start + slice.rows();
      long lo = Math.max(from, start);
      long hi = Math.min(to, end);
      if (lo < hi) {
        parts.add(new SlicePart(slice.sliceId(), lo - start, hi - start, slice.holder()));
      }
      start = end;
    }
    return parts;
  }
}
