package io.floe.gateway;

import io.floe.store.LoadedSlice;
import java.util.List;

/**
 * Tells a stream when a slice it reads was released by its owner ({@link BatchSource#withdrawn}:
 * its dataset dropped or failed, or it moved away and its linger ended), so that it ends instead of
 * serving the rows and pinning their memory. A reload under the same id is another copy: the
 * stream's own copy is what counts.
 */
public final class HeldSlices extends ForwardingBatchSource {
  private final List<LoadedSlice> slices;

  private HeldSlices(BatchSource source, List<LoadedSlice> slices) {
    super(source);
    this.slices = slices;
  }

  /** {@code source}, withdrawn once any of {@code slices} is released by its owner. */
  public static BatchSource watching(BatchSource source, List<LoadedSlice> slices) {
    return new HeldSlices(source, List.copyOf(slices));
  }

  @Override
  public boolean withdrawn() {
    for (LoadedSlice slice : slices) {
      if (slice.released()) {
        return true;
      }
    }
    return super.withdrawn();
  }
}
