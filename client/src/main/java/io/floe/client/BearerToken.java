package io.floe.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;

/**
 * Sends {@code Authorization: Bearer <token>} with every call of a client, as a gRPC interceptor on
 * the channels Floe's client builds and as Flight middleware on the others.
 */
final class BearerToken implements ClientInterceptor, FlightClientMiddleware.Factory {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String header;

  BearerToken(String token) {
    if (token == null || token.isBlank() || token.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException("Invalid bearer token: empty or with whitespace");
    }
    this.header = "Bearer " + token;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(
      MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<A> listener, Metadata headers) {
        headers.put(AUTHORIZATION, header);
        super.start(listener, headers);
      }
    };
  }

  @Override
  public FlightClientMiddleware onCallStarted(CallInfo info) {
    return new FlightClientMiddleware() {
      @Override
      public void onBeforeSendingHeaders(CallHeaders outgoing) {
        outgoing.insert("authorization", header);
      }

      @Override
      public void onHeadersReceived(CallHeaders incoming) {}

      @Override
      public void onCallCompleted(CallStatus status) {}
    };
  }
}
