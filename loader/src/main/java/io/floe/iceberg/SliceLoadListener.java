package io.floe.iceberg;

import java.time.Duration;

/**
 * Hears how this node's slice loads went, for its metrics. Called from the slice's actor; must not
 * block.
 */
public interface SliceLoadListener {
  /** Why a slice loaded here. */
  enum Cause {
    /** Its dataset asked for it: a first load, a refresh's new slices, or a reload after a drop. */
    REQUESTED,
    /** It started here on its own: its node joined, left or died, or sharding rebalanced it. */
    MOVED
  }

  void loaded(Cause cause, long rows, long bytes, Duration took);

  void failed(Cause cause, Duration took);

  /** Hears nothing. */
  SliceLoadListener NONE =
      new SliceLoadListener() {
        @Override
        public void loaded(Cause cause, long rows, long bytes, Duration took) {}

        @Override
        public void failed(Cause cause, Duration took) {}
      };
}
