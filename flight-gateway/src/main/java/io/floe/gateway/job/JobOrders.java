package io.floe.gateway.job;

import io.floe.dataset.DatasetLayout;
import io.floe.job.EpochOrder;
import io.floe.job.OrderSettings;
import io.floe.ticket.JobTicket;
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

  /** A rank's batch of an epoch order: what a job read's plan and streams share. */
  record BatchKey(
      String layout,
      OrderSettings order,
      long epoch,
      int batchRows,
      io.floe.job.TailPolicy tail,
      int worldSize,
      int rank,
      long batch) {
    static BatchKey of(JobTicket ticket, long batch) {
      return new BatchKey(
          ticket.layout(),
          ticket.order(),
          ticket.epoch(),
          ticket.batchRows(),
          ticket.tail(),
          ticket.worldSize(),
          ticket.rank(),
          batch);
    }
  }

  /** Located batches are kept up to this many rows in all (12 bytes a row while located). */
  private static final long BATCH_ROWS_KEPT = 4L << 20;

  private final LinkedHashMap<BatchKey, LocatedBatch> batches =
      new LinkedHashMap<>(16, 0.75f, true);
  private long batchRowsHeld;

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

  /** The rank's rows of batch {@code k} of the ticket's epoch, located once for every stream. */
  LocatedBatch located(JobTicket ticket, io.floe.job.RankShare share, long k) {
    return located(BatchKey.of(ticket, k), share);
  }

  /** The batch's rows, located once for all the plans and streams that need them. */
  LocatedBatch located(BatchKey key, io.floe.job.RankShare share) {
    synchronized (this) {
      LocatedBatch known = batches.get(key);
      if (known != null) {
        return known;
      }
    }
    LocatedBatch located = LocatedBatch.of(share, key.batch());
    synchronized (this) {
      LocatedBatch replaced = batches.put(key, located);
      batchRowsHeld += located.size() - (replaced == null ? 0 : replaced.size());
      var eldest = batches.entrySet().iterator();
      while (batchRowsHeld > BATCH_ROWS_KEPT && eldest.hasNext()) {
        batchRowsHeld -= eldest.next().getValue().size();
        eldest.remove();
      }
    }
    return located;
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
