package io.floe.gateway.job;

import io.floe.spec.DatasetLayout;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which node holds which slice of a layout, as a job read plan cut it: the distinct holders (one
 * endpoint each) and a fingerprint of the whole assignment, which a job ticket carries so that the
 * node serving it takes exactly the slices the planner gave it, or refuses the ticket when its view
 * of the placement differs (a slice moved between plan and read).
 *
 * <p>A slice with copies on several nodes is placed on its holder, or on its first standby not
 * among the nodes to avoid when the holder is (a reader could not reach it); a slice all of whose
 * holders are avoided stays on its holder, where the read fails and is planned again once the
 * dataset has moved it.
 */
final class Placement {
  private final List<String> holders;
  private final int[] holderOf;
  private final String fingerprint;

  private Placement(List<String> holders, int[] holderOf, String fingerprint) {
    this.holders = holders;
    this.holderOf = holderOf;
    this.fingerprint = fingerprint;
  }

  static Placement of(DatasetLayout layout) {
    return of(layout, Set.of());
  }

  /**
   * The placements computed last, by layout instance and nodes to avoid: a plan places its layout
   * and every stream of it verifies the same placement, each a hash over every slice, while the
   * layouts they share are the same objects (this node's copies) until slices move.
   */
  private static final int CACHED = 64;

  private static final Map<Key, Placement> RECENT =
      java.util.Collections.synchronizedMap(
          new java.util.LinkedHashMap<>(CACHED, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Placement> eldest) {
              return size() > CACHED;
            }
          });

  /** A layout by identity (its equals compares every slice) and the nodes to avoid. */
  private record Key(DatasetLayout layout, Set<String> avoid) {
    @Override
    public boolean equals(Object other) {
      return other instanceof Key key && key.layout == layout && key.avoid.equals(avoid);
    }

    @Override
    public int hashCode() {
      return 31 * System.identityHashCode(layout) + avoid.hashCode();
    }
  }

  static Placement of(DatasetLayout layout, Collection<String> avoid) {
    return RECENT.computeIfAbsent(new Key(layout, Set.copyOf(avoid)), Placement::place);
  }

  private static Placement place(Key key) {
    DatasetLayout layout = key.layout();
    Collection<String> avoid = key.avoid();
    List<DatasetLayout.SliceRows> slices = layout.slices();
    Map<String, Integer> index = new HashMap<>();
    java.util.ArrayList<String> holders = new java.util.ArrayList<>();
    int[] holderOf = new int[slices.size()];
    MessageDigest digest = sha256();
    for (int s = 0; s < slices.size(); s++) {
      String holder = placed(slices.get(s), avoid);
      Integer known = index.get(holder);
      if (known == null) {
        known = holders.size();
        index.put(holder, known);
        holders.add(holder);
      }
      holderOf[s] = known;
      digest.update(holder.getBytes(StandardCharsets.UTF_8));
      digest.update((byte) '\n');
    }
    String fingerprint = HexFormat.of().formatHex(digest.digest(), 0, 12);
    return new Placement(List.copyOf(holders), holderOf, fingerprint);
  }

  private static String placed(DatasetLayout.SliceRows slice, Collection<String> avoid) {
    if (avoid.isEmpty() || !avoid.contains(slice.holder())) {
      return slice.holder();
    }
    for (String standby : slice.standbys()) {
      if (!avoid.contains(standby)) {
        return standby;
      }
    }
    return slice.holder();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every JVM has SHA-256", e);
    }
  }

  /** The distinct holders, in the order their first slice comes in the layout. */
  List<String> holders() {
    return holders;
  }

  /** The index in {@link #holders} of the node holding slice {@code s}. */
  int holderOf(int slice) {
    return holderOf[slice];
  }

  String fingerprint() {
    return fingerprint;
  }
}
