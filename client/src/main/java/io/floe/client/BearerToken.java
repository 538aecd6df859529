package io.floe.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.function.Supplier;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;

/**
 * Sends {@code Authorization: Bearer <token>} with every call of a client, as a gRPC interceptor on
 * the channels Floe's client builds and as Flight middleware on the others. The token is fixed, or
 * read from a {@link TokenFile} as each call starts, so a renewed file is used from the next call.
 */
final class BearerToken implements ClientInterceptor, FlightClientMiddleware.Factory {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Supplier<String> header;

  private BearerToken(Supplier<String> header) {
    this.header = header;
  }

  /** A token sent as it is. */
  static BearerToken of(String token) {
    String header = header(token, "");
    return new BearerToken(() -> header);
  }

  /** The token a file holds at each call; the file is read once here, so a bad one fails now. */
  static BearerToken from(java.nio.file.Path file) {
    return new BearerToken(new TokenFile(file)::header);
  }

  /** The header's value for {@code token}; {@code where} says where the token came from. */
  static String header(String token, String where) {
    if (token == null || token.isBlank() || token.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException(
          "Invalid bearer token"
              + (where.isEmpty() ? "" : " " + where)
              + ": empty or with whitespace");
    }
    return "Bearer " + token;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(
      MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    // Read before the call exists: a token file that cannot be read fails the call here.
    String value = header.get();
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<A> listener, Metadata headers) {
        headers.put(AUTHORIZATION, value);
        super.start(listener, headers);
      }
    };
  }

  @Override
  public FlightClientMiddleware onCallStarted(CallInfo info) {
    String value = header.get();
    return new FlightClientMiddleware() {
      @Override
      public void onBeforeSendingHeaders(CallHeaders outgoing) {
        outgoing.insert("authorization", value);
      }

      @Override
      public void onHeadersReceived(CallHeaders incoming) {}

      @Override
      public void onCallCompleted(CallStatus status) {}
    };
  }
}
