package io.floe.gateway.job;

import io.floe.job.EpochOrder;
import io.floe.job.OrderSettings;
import io.floe.spec.DatasetLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * This node's recently used epoch orders and the layouts they were built from, by layout
 * fingerprint. Planning and streaming a job's batches both need the epoch's order; building one
 * walks every block of the dataset, so each is built once and shared by every stream of the epoch.
 */
final class JobOrders {
  private static final int ORDERS_KEPT = 8;
  private static final int LAYOUTS_KEPT = 16;

  private record Key(String layout, OrderSettings order, long epoch) {}

  private final Map<Key, EpochOrder> orders = lru(ORDERS_KEPT);
  private final Map<String, DatasetLayout> layouts = lru(LAYOUTS_KEPT);

  private static <K, V> Map<K, V> lru(int capacity) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > capacity;
      }
    };
  }

  /** Keeps a layout under its fingerprint, which the caller has computed or checked already. */
  synchronized void remember(String fingerprint, DatasetLayout layout) {
    layouts.put(fingerprint, layout);
  }

  /** The layout with this fingerprint, if this node has seen it lately; else null. */
  synchronized DatasetLayout layout(String fingerprint) {
    return layouts.get(fingerprint);
  }

  /** The epoch's order of the layout with this (already checked) fingerprint. */
  EpochOrder order(String fingerprint, DatasetLayout layout, OrderSettings order, long epoch) {
    Key key = new Key(fingerprint, order, epoch);
    synchronized (this) {
      EpochOrder known = orders.get(key);
      if (known != null) {
        return known;
      }
    }
    // Built outside the lock: two streams may build the same order once each, which is harmless.
    EpochOrder built = new EpochOrder(layout.sliceRowCounts(), order, epoch);
    synchronized (this) {
      orders.put(key, built);
    }
    return built;
  }
}
