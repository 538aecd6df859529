package io.floe.store;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The slices this node holds, by slice id. Slice entities put and remove; the gateway acquires
 * leases from here to stream without a round trip through the actor.
 */
public final class SliceStore {
  private final Map<String, LoadedSlice> slices = new ConcurrentHashMap<>();

  public void put(LoadedSlice slice) {
    slices.put(slice.sliceId(), slice);
  }

  public void remove(LoadedSlice slice) {
    slices.remove(slice.sliceId(), slice);
  }

  /** A lease on a held slice, or empty when this node does not hold it (any more). */
  public Optional<LoadedSlice.Lease> acquire(String sliceId) {
    LoadedSlice slice = slices.get(sliceId);
    return slice == null ? Optional.empty() : slice.acquire();
  }

  public Collection<LoadedSlice> slices() {
    return slices.values();
  }

  public int size() {
    return slices.size();
  }
}
