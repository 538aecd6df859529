package io.floe.client;

import io.floe.protocol.ReadRequest;
import io.floe.ticket.FloeTicket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one shard of a dataset so that every row reaches the consumer exactly once even while data
 * nodes come and go. It remembers how many rows of each endpoint it delivered; when a stream fails
 * because its node left, died or no longer holds the slice, it plans the shard again (through any
 * node it knows), finds the same slice rows at their new holder, skips what it already delivered
 * and goes on. Row counts of a slice never change for a loaded dataset, so the same slice range
 * names the same rows wherever the slice lives.
 */
final class ShardReader {
  private static final Logger LOG = LoggerFactory.getLogger(ShardReader.class);
  private static final Duration BACKOFF_MAX = Duration.ofSeconds(2);

  private final FloeClient client;
  private final ReadRequest request;
  private final Duration patience;

  ShardReader(FloeClient client, ReadRequest request, Duration patience) {
    this.client = client;
    this.request = request;
    this.patience = patience;
  }

  long read(Consumer<VectorSchemaRoot> batches) {
    FlightInfo plan = planWithRetries();
    List<FloeTicket> parts = new ArrayList<>();
    for (FlightEndpoint endpoint : plan.getEndpoints()) {
      parts.add(FloeTicket.parse(endpoint.getTicket()));
    }
    long total = 0;
    for (int i = 0; i < parts.size(); i++) {
      FloeTicket part = parts.get(i);
      FlightEndpoint endpoint = plan.getEndpoints().get(i);
      long[] delivered = {0};
      long deadline = System.nanoTime() + patience.toNanos();
      int attempt = 0;
      int holder = 0; // which of the endpoint's locations is read
      while (delivered[0] < part.rows()) {
        try {
          stream(endpoint, holder, delivered, batches);
          if (delivered[0] < part.rows()) {
            throw new IllegalStateException(
                String.format(
                    "Endpoint of slice %s ended after %d of %d rows",
                    part.sliceId(), delivered[0], part.rows()));
          }
        } catch (FlightRuntimeException e) {
          if (!retryable(e) || System.nanoTime() > deadline) {
            throw e;
          }
          if (e.status().code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE
              && holder + 1 < endpoint.getLocations().size()) {
            holder++; // another node holds a copy of the slice: read the rest from it at once
            LOG.info(
                "Slice {} failed after {} of {} rows ({}); reading it from its next holder",
                part.sliceId(),
                delivered[0],
                part.rows(),
                e.status().code());
            continue;
          }
          LOG.info(
              "Slice {} failed after {} of {} rows ({}); planning again",
              part.sliceId(),
              delivered[0],
              part.rows(),
              e.status().code());
          backoff(attempt++);
          plan = planWithRetries();
          endpoint = find(plan, part);
          holder = 0;
        }
      }
      total += delivered[0];
    }
    return total;
  }

  /**
   * Streams an endpoint, skipping the rows {@code delivered[0]} says were already delivered and
   * counting up what it delivers, so that progress survives a failure mid-stream.
   */
  private void stream(
      FlightEndpoint endpoint, int holder, long[] delivered, Consumer<VectorSchemaRoot> batches) {
    Location location = client.locationOf(endpoint, holder);
    long skip = delivered[0];
    long seen = 0;
    try (FlightStream stream = client.flight(location).getStream(endpoint.getTicket())) {
      while (stream.next()) {
        VectorSchemaRoot root = stream.getRoot();
        int rows = root.getRowCount();
        long from = Math.max(0, skip - seen);
        seen += rows;
        if (from >= rows) {
          continue;
        }
        if (from == 0) {
          batches.accept(root);
        } else {
          try (VectorSchemaRoot rest = root.slice((int) from, rows - (int) from)) {
            batches.accept(rest);
          }
        }
        delivered[0] += rows - from;
      }
    } catch (FlightRuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("Failed to close stream", e);
    }
  }

  private FlightInfo planWithRetries() {
    long deadline = System.nanoTime() + patience.toNanos();
    FlightDescriptor descriptor = FlightDescriptor.command(request.toJson());
    int attempt = 0;
    while (true) {
      // Ask every known node before giving up: one that is leaving may not know the dataset.
      FlightRuntimeException lastFinal = null;
      boolean anyRetryable = false;
      for (Location entry : client.entries()) {
        try {
          return client.flight(entry).getInfo(descriptor);
        } catch (FlightRuntimeException e) {
          LOG.debug("Planning through {} failed: {}", entry.getUri(), e.getMessage());
          if (retryable(e)) {
            anyRetryable = true;
          } else {
            lastFinal = e;
          }
        }
      }
      if (!anyRetryable && lastFinal != null) {
        throw lastFinal;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "No node could plan " + request + " within " + patience + "; the cluster is changing");
      }
      backoff(attempt++);
    }
  }

  private static FlightEndpoint find(FlightInfo plan, FloeTicket part) {
    for (FlightEndpoint endpoint : plan.getEndpoints()) {
      FloeTicket candidate = FloeTicket.parse(endpoint.getTicket());
      if (candidate.sliceId().equals(part.sliceId())
          && candidate.from() == part.from()
          && candidate.to() == part.to()) {
        return endpoint;
      }
    }
    throw new IllegalStateException(
        "The new plan of "
            + request(plan)
            + " has no endpoint for slice "
            + part.sliceId()
            + " rows ["
            + part.from()
            + ", "
            + part.to()
            + "); the dataset changed under the reader");
  }

  private static String request(FlightInfo plan) {
    return plan.getDescriptor().toString();
  }

  /**
   * Failures that a new plan can cure: the node is gone or unreachable, it no longer holds the
   * slice, or the dataset is reloading (by the node's error code; see {@link Failures}).
   */
  static boolean retryable(FlightRuntimeException e) {
    return Failures.retryableRead(e);
  }

  private static void backoff(int attempt) {
    long millis = Math.min(BACKOFF_MAX.toMillis(), 100L << Math.min(attempt, 5));
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting to retry", e);
    }
  }
}
