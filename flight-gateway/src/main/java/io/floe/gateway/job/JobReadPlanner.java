package io.floe.gateway.job;

import io.floe.gateway.FlightErrors;
import io.floe.gateway.SliceHolders;
import io.floe.job.EpochShape;
import io.floe.job.JobRead;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.RankShare;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.InvalidRequestException;
import io.floe.protocol.JobReadRequest;
import io.floe.spec.DatasetLayout;
import io.floe.tenant.Owner;
import io.floe.ticket.JobTicket;
import io.floe.ticket.TicketSigner;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;

/**
 * Plans a job read: finds which nodes hold the rank's rows of the listed batches (at the grain of
 * the order's windows: a node holding only blocks of a window none of whose rows the rank reads
 * gets an endpoint that streams nothing) and gives one endpoint per such node, whose ticket names
 * the rank, the batches, the order and the placement the plan used. The plan's size depends on the
 * nodes, not on the slices. Each endpoint streams the rows its node holds of each listed batch, in
 * order, in record batches of up to the request's {@code batches_per_message} batches; the rank's
 * batch is put together from the parts by the places in their metadata ({@link
 * io.floe.ticket.JobBatchMetadata}).
 */
final class JobReadPlanner {
  private final TicketSigner tickets;
  private final JobOrders orders;

  JobReadPlanner(TicketSigner tickets, JobOrders orders) {
    this.tickets = tickets;
    this.orders = orders;
  }

  /**
   * @param bearer the caller the tickets are bound to (null: unbound, the anonymous caller)
   */
  FlightInfo plan(
      JobStatus job,
      DatasetLayout layout,
      JobReadRequest request,
      FlightDescriptor descriptor,
      Owner bearer) {
    JobSpec spec = job.spec();
    String fingerprint = job.layout().fingerprint();
    checkLayout(job, layout);
    orders.remember(fingerprint, layout);
    EpochShape shape = new EpochShape(layout.rows(), spec.batchRows(), spec.tail());
    long batchTo = request.batchTo() == null ? shape.batches() : request.batchTo();
    if (batchTo > shape.batches()) {
      throw new InvalidRequestException(
          String.format(
              "Invalid batch_to: %d; job '%s' has %d batches per epoch",
              batchTo, spec.job(), shape.batches()));
    }
    JobRead read =
        new JobRead(
            fingerprint,
            request.epoch(),
            spec.order(),
            spec.batchRows(),
            spec.tail(),
            request.worldSize(),
            request.rank(),
            request.batchFrom(),
            batchTo,
            request.batchStep());
    // The request's world size and rank are checked against the job's batch here.
    RankShare share =
        InvalidRequestException.reading(
            () ->
                read.share(
                    layout.rows(),
                    orders.order(fingerprint, layout, spec.order(), request.epoch())));
    Placement placement = Placement.of(layout, request.avoid());
    // Which slices the batches need, block by block: no row is located to plan (the streams do
    // that, each for its own batches), so a plan's work grows with the batches, not their rows.
    boolean[] sliceNeeded = new boolean[layout.slices().size()];
    long batches = 0;
    for (long k = read.batchFrom(); k < read.batchTo(); k += read.batchStep()) {
      share.markSlices(k, sliceNeeded);
      batches++;
    }
    boolean[] touched = new boolean[placement.holders().size()];
    for (int s = 0; s < sliceNeeded.length; s++) {
      if (sliceNeeded[s]) {
        touched[placement.holderOf(s)] = true;
      }
    }
    List<FlightEndpoint> endpoints = new ArrayList<>();
    for (int h = 0; h < touched.length; h++) {
      if (!touched[h]) {
        continue;
      }
      String holder = placement.holders().get(h);
      JobTicket ticket =
          new JobTicket(
              layout.name(),
              holder,
              placement.fingerprint(),
              spec.job(),
              read,
              spec.columns(),
              request.batchesPerMessage(),
              request.avoid());
      endpoints.add(
          new FlightEndpoint(
              tickets.sign(ticket, bearer), SliceHolders.location(layout.name(), holder)));
    }
    long records = batches * share.rowsPerBatch();
    double bytesPerRow = layout.rows() == 0 ? 0 : (double) layout.bytes() / layout.rows();
    return FlightInfo.builder(
            JobSchemas.project(JobSchemas.of(layout), spec.columns(), layout.name()),
            descriptor,
            endpoints)
        .setRecords(records)
        .setBytes(Math.round(records * bytesPerRow))
        .setOrdered(true)
        .build();
  }

  /** A job's order is a function of the layout it was registered on: refuse any other. */
  static void checkLayout(JobStatus job, DatasetLayout layout) {
    String pinned = job.layout().fingerprint();
    String now = layout.fingerprint();
    if (!pinned.equals(now)) {
      throw FlightErrors.error(
          ErrorCode.LAYOUT_CHANGED,
          String.format(
              "Dataset '%s' changed since job '%s' was registered (layout %s, now %s); register"
                  + " a new job to read it",
              layout.name(), job.spec().job(), pinned, now));
    }
  }
}
