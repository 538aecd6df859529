package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Reads training-job epochs through the Java client the way ranks of a training run would, and
 * reduces them to row ids per global batch so tests can compare orders across world sizes.
 */
final class JobReads {
  /** Small chunks, so that an epoch of a small test table still takes several plans. */
  static final int CHUNK_BATCHES = 7;

  private JobReads() {}

  /** The {@code id} column of a batch, in row order. */
  static List<Long> ids(VectorSchemaRoot root) {
    BigIntVector ids = (BigIntVector) root.getVector("id");
    List<Long> out = new ArrayList<>(root.getRowCount());
    for (int row = 0; row < root.getRowCount(); row++) {
      out.add(ids.get(row));
    }
    return out;
  }

  /** Every row id of a whole dataset in its global order (shard 0 of 1). */
  static List<Long> globalOrder(FloeClient client, String dataset) {
    List<Long> order = new ArrayList<>();
    client.read(client.plan(dataset, 0, 1), root -> order.addAll(ids(root)));
    return order;
  }

  /**
   * Rank {@code rank} of {@code worldSize} from {@code from}, for {@code count} batches or (when
   * {@code count} is negative) to the end of the epoch: the ids of each batch, in batch order.
   * Checks the reader hands out consecutive indices, each of {@code batch_rows / worldSize} rows.
   */
  static List<List<Long>> readRank(
      FloeClient client,
      JobOptions options,
      int epoch,
      int worldSize,
      int rank,
      long from,
      long count) {
    List<List<Long>> batches = new ArrayList<>();
    try (JobReader reader =
        client
            .jobReader(options)
            .epoch(epoch)
            .worldSize(worldSize)
            .rank(rank)
            .batchFrom(from)
            .chunkBatches(CHUNK_BATCHES)
            .open()) {
      long expected = from;
      while (reader.hasNext() && (count < 0 || batches.size() < count)) {
        try (JobBatch batch = reader.next()) {
          assertThat(batch.index())
              .as("batch index of rank %d/%d", rank, worldSize)
              .isEqualTo(expected++);
          assertThat(batch.rows()).isEqualTo(options.batchRows() / worldSize);
          batches.add(ids(batch.root()));
        }
      }
      if (count >= 0) {
        assertThat(batches).as("batches read by rank %d/%d", rank, worldSize).hasSize((int) count);
        assertThat(reader.checkpoint().batchesConsumed()).isEqualTo(from + count);
      }
    }
    return batches;
  }

  /**
   * All ranks of {@code worldSize} at once, each on its own thread, from {@code from} for {@code
   * count} batches (negative: to the end): global batch {@code k} is the rank-ordered concatenation
   * of every rank's batch {@code k}.
   */
  static List<List<Long>> readGlobal(
      FloeClient client, JobOptions options, int epoch, int worldSize, long from, long count) {
    ExecutorService ranks = Executors.newFixedThreadPool(worldSize);
    try {
      List<Future<List<List<Long>>>> futures = new ArrayList<>();
      for (int rank = 0; rank < worldSize; rank++) {
        int r = rank;
        futures.add(
            ranks.submit(() -> readRank(client, options, epoch, worldSize, r, from, count)));
      }
      List<List<List<Long>>> perRank = new ArrayList<>();
      for (Future<List<List<Long>>> future : futures) {
        perRank.add(future.get());
      }
      List<List<Long>> global = new ArrayList<>();
      for (int k = 0; k < perRank.get(0).size(); k++) {
        List<Long> batch = new ArrayList<>();
        for (List<List<Long>> rank : perRank) {
          assertThat(rank).as("every rank reads as many batches").hasSameSizeAs(perRank.get(0));
          batch.addAll(rank.get(k));
        }
        global.add(batch);
      }
      return global;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      if (e.getCause() instanceof Error) {
        throw (Error) e.getCause();
      }
      throw new IllegalStateException(e.getCause());
    } finally {
      ranks.shutdownNow();
    }
  }

  /** A whole epoch at one world size. */
  static List<List<Long>> readEpoch(
      FloeClient client, JobOptions options, int epoch, int worldSize) {
    return readGlobal(client, options, epoch, worldSize, 0, -1);
  }

  /**
   * Each batch's ids sorted: a rank's batch holds its rows grouped by slice, so the order inside a
   * global batch depends on the world size while its rows do not.
   */
  static List<List<Long>> sortedWithin(List<List<Long>> batches) {
    List<List<Long>> sorted = new ArrayList<>();
    for (List<Long> batch : batches) {
      List<Long> copy = new ArrayList<>(batch);
      copy.sort(null);
      sorted.add(copy);
    }
    return sorted;
  }

  /**
   * Joins every {@code factor} consecutive batches into one, sorted: the batches a job with {@code
   * factor} times the batch size would read, for the same order settings.
   */
  static List<List<Long>> coarser(List<List<Long>> batches, int factor) {
    List<List<Long>> joined = new ArrayList<>();
    for (int k = 0; k + factor <= batches.size(); k += factor) {
      joined.add(flatten(batches.subList(k, k + factor)));
    }
    return sortedWithin(joined);
  }

  static List<Long> flatten(List<List<Long>> batches) {
    List<Long> all = new ArrayList<>();
    batches.forEach(all::addAll);
    return all;
  }

  /** How often each id occurs. */
  static Map<Long, Integer> counts(List<Long> ids) {
    Map<Long, Integer> counts = new HashMap<>();
    ids.forEach(id -> counts.merge(id, 1, Integer::sum));
    return counts;
  }
}
