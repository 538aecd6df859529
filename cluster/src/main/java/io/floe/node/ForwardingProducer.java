package io.floe.node;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FloeProducer;
import io.floe.gateway.TicketStreams;
import io.floe.protocol.ErrorCode;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;

/** Lets the Flight server start before the producer exists (it needs the bound port). */
final class ForwardingProducer implements FlightProducer, TicketStreams {
  private volatile FloeProducer delegate;

  void delegate(FloeProducer producer) {
    this.delegate = producer;
  }

  private FloeProducer target() {
    FloeProducer target = delegate;
    if (target == null) {
      throw ErrorCode.NODE_STARTING.exception("Node is starting", null);
    }
    return target;
  }

  @Override
  public BatchSource open(Ticket ticket) {
    return target().open(ticket);
  }

  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    target().getStream(context, ticket, listener);
  }

  @Override
  public void listFlights(
      CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    target().listFlights(context, criteria, listener);
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    return target().getFlightInfo(context, descriptor);
  }

  @Override
  public Runnable acceptPut(
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return target().acceptPut(context, flightStream, ackStream);
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    target().doAction(context, action, listener);
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    target().listActions(context, listener);
  }
}
