package io.floe.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The slices this node holds, by slice id. Slice entities put and remove; the gateway acquires
 * leases from here to stream without a round trip through the actor.
 *
 * <p>A node holds two copies of one slice only when a dataset has more replicas than there are
 * nodes to separate them (one node, replicas 2): each copy is its entity's, freed by it alone, and
 * readers take whichever is still held.
 */
public final class SliceStore {
  private final Map<String, List<LoadedSlice>> slices = new ConcurrentHashMap<>();

  public void put(LoadedSlice slice) {
    slices.compute(
        slice.sliceId(),
        (id, copies) -> {
          List<LoadedSlice> held = copies == null ? new CopyOnWriteArrayList<>() : copies;
          held.add(slice);
          return held;
        });
  }

  public void remove(LoadedSlice slice) {
    slices.computeIfPresent(
        slice.sliceId(),
        (id, copies) -> {
          copies.remove(slice);
          return copies.isEmpty() ? null : copies;
        });
  }

  /** A lease on a held slice, or empty when this node does not hold it (any more). */
  public Optional<LoadedSlice.Lease> acquire(String sliceId) {
    List<LoadedSlice> copies = slices.get(sliceId);
    if (copies != null) {
      for (LoadedSlice copy : copies) {
        Optional<LoadedSlice.Lease> lease = copy.acquire();
        if (lease.isPresent()) {
          return lease;
        }
      }
    }
    return Optional.empty();
  }

  public Collection<LoadedSlice> slices() {
    List<LoadedSlice> all = new ArrayList<>();
    slices.values().forEach(all::addAll);
    return all;
  }

  public int size() {
    int size = 0;
    for (List<LoadedSlice> copies : slices.values()) {
      size += copies.size();
    }
    return size;
  }
}
