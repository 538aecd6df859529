package io.floe.node;

import io.floe.gateway.BatchSource;
import io.floe.gateway.server.FloeProducer;
import io.floe.gateway.server.TicketStreams;
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

/**
 * Lets the Flight server start before the producer exists (it needs the bound port), and lets a
 * leaving node go on streaming the slices it still holds while refusing plans and actions at once:
 * once its cluster membership ends, every question it would ask an entity waits out the whole ask
 * timeout, while any other node answers.
 */
final class ForwardingProducer implements FlightProducer, TicketStreams {
  private volatile FloeProducer delegate;
  private volatile boolean leaving;

  void delegate(FloeProducer producer) {
    this.delegate = producer;
  }

  /** From now on plans and actions are refused (NODE_LEAVING); DoGet goes on. */
  void leaving() {
    this.leaving = true;
  }

  /** The producer, for calls that need the cluster. */
  private FloeProducer member() {
    if (leaving) {
      throw ErrorCode.NODE_LEAVING.exception(
          "Node is leaving its cluster; plan and act through another node", null);
    }
    return target();
  }

  private FloeProducer target() {
    FloeProducer target = delegate;
    if (target == null) {
      throw ErrorCode.NODE_STARTING.exception("Node is starting", null);
    }
    return target;
  }

  @Override
  public BatchSource open(io.floe.auth.Caller caller, Ticket ticket) {
    return target().open(caller, ticket);
  }

  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    target().getStream(context, ticket, listener);
  }

  @Override
  public void listFlights(
      CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    member().listFlights(context, criteria, listener);
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    return member().getFlightInfo(context, descriptor);
  }

  @Override
  public Runnable acceptPut(
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return member().acceptPut(context, flightStream, ackStream);
  }

  @Override
  public void doExchange(CallContext context, FlightStream reader, ServerStreamListener writer) {
    member().doExchange(context, reader, writer);
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    member().doAction(context, action, listener);
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    target().listActions(context, listener);
  }
}
