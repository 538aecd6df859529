package io.floe.gateway;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * A source whose next batches are made ahead, on a shared executor, while the current one is on the
 * wire: a job's batches are gathered (its cost) while gRPC writes the one before and the reader
 * takes it, so a stream uses a core for gathering and another for the rest. A {@link
 * StagedBatchSource}'s batches are made side by side, up to the depth at once, so one stream may
 * gather on several cores; only their planning is one at a time.
 *
 * <p>Calls to the wrapped source (its {@code next}, or its {@code plan}) are chained, one at a time
 * and in order, so it needs no locking of its own. Closing waits for the calls in progress, if any,
 * before closing the source (which may release the memory they read), and releases the batches made
 * but never taken.
 */
public final class ReadAheadBatches implements BatchSource {
  private final BatchSource source;
  private final Executor executor;
  private final int depth;
  private final ArrayDeque<CompletableFuture<FlightFrame>> ahead = new ArrayDeque<>();

  /** The last call asked of the source: the next one runs after it. */
  private CompletableFuture<?> last = CompletableFuture.completedFuture(null);

  /** Set once the source has answered null (no more batches) or failed. */
  private volatile boolean ended;

  private volatile boolean closed;

  /** Reads up to {@code depth} (at least 1) batches of {@code source} ahead on {@code executor}. */
  public ReadAheadBatches(BatchSource source, Executor executor, int depth) {
    if (depth < 1) {
      throw new IllegalArgumentException("A read-ahead depth must be at least 1: " + depth);
    }
    this.source = source;
    this.executor = executor;
    this.depth = depth;
  }

  @Override
  public FlightFrame schema() {
    return source.schema(); // asked first, before any batch is made ahead
  }

  @Override
  public synchronized FlightFrame next() {
    fill();
    CompletableFuture<FlightFrame> head = ahead.poll();
    if (head == null) {
      return null;
    }
    FlightFrame frame;
    try {
      frame = head.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException cause ? cause : e;
    }
    fill();
    return frame;
  }

  /** Asks for batches until {@code depth} are made or being made. */
  private void fill() {
    while (!ended && !closed && ahead.size() < depth) {
      // thenApplyAsync on a failed call fails too, without calling the source again.
      if (source instanceof StagedBatchSource staged) {
        CompletableFuture<StagedBatchSource.Work> planned =
            last.thenApplyAsync(ignored -> plan(staged), executor);
        ahead.add(
            planned.thenApplyAsync(work -> work == null || closed ? null : work.make(), executor));
        last = planned;
      } else {
        CompletableFuture<FlightFrame> call = last.thenApplyAsync(ignored -> pull(), executor);
        ahead.add(call);
        last = call;
      }
    }
  }

  private StagedBatchSource.Work plan(StagedBatchSource staged) {
    return ask(staged::plan);
  }

  private FlightFrame pull() {
    return ask(source::next);
  }

  /** One call of the source: nothing once closed, and the end noted at its null or failure. */
  private <T> T ask(Supplier<T> call) {
    if (closed) {
      return null;
    }
    try {
      T answer = call.get();
      if (answer == null) {
        ended = true;
      }
      return answer;
    } catch (RuntimeException e) {
      ended = true;
      throw e;
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<CompletableFuture<?>> settled = new ArrayList<>();
    for (CompletableFuture<FlightFrame> made : ahead) {
      settled.add(
          made.thenAccept(
              frame -> {
                if (frame != null) {
                  frame.releaseUnclaimed();
                }
              }));
    }
    ahead.clear();
    // After the last call asked and every batch being made (they may be reading the memory that
    // closing the source releases), and after the batches made ahead are given back.
    settled.add(last);
    CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new))
        .whenComplete((done, error) -> source.close());
  }
}
