package io.floe.gateway;

import io.floe.store.LoadedSlice;
import io.floe.store.SliceStore;
import java.util.List;

/**
 * Tells a stream when the slices it reads are no longer held on this node ({@link
 * BatchSource#withdrawn}), so that it ends instead of serving a dropped dataset's rows and pinning
 * their memory.
 */
public final class HeldSlices extends ForwardingBatchSource {
  private final SliceStore store;
  private final List<LoadedSlice> slices;

  private HeldSlices(BatchSource source, SliceStore store, List<LoadedSlice> slices) {
    super(source);
    this.store = store;
    this.slices = slices;
  }

  /** {@code source}, withdrawn once {@code store} stops holding any of {@code slices}. */
  public static BatchSource watching(
      BatchSource source, SliceStore store, List<LoadedSlice> slices) {
    return new HeldSlices(source, store, List.copyOf(slices));
  }

  /**
   * True while {@code store} holds this very copy of the slice. A slice leaves the store when its
   * owner releases it (drop, failure, the end of a move's linger), and a reload under the same id
   * is another copy, so identity is what counts.
   */
  public static boolean holds(SliceStore store, LoadedSlice slice) {
    return store
        .acquire(slice.sliceId())
        .map(
            lease -> {
              try (lease) {
                return lease.slice() == slice;
              }
            })
        .orElse(false);
  }

  @Override
  public boolean withdrawn() {
    for (LoadedSlice slice : slices) {
      if (!holds(store, slice)) {
        return true;
      }
    }
    return super.withdrawn();
  }
}
