package io.floe.gateway.server;

import io.floe.auth.Permissions;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import org.apache.arrow.flight.RequestContext;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.grpc.RequestContextAdapter;
import org.apache.arrow.flight.grpc.StatusUtils;

/**
 * Refuses every call whose caller was not authenticated before any of the Flight service's methods
 * runs, with UNAUTHENTICATED and its error code: Handshake (which Flight answers itself), DoPut and
 * DoExchange too, which no Floe handler checks. Flight's auth middleware runs first, as an
 * interceptor of the whole server, and leaves the caller in the call's context; it does not refuse
 * calls itself, since its refusals carry no error code ({@code BearerAuthenticator}). Handlers
 * still check the role each request needs ({@link Permissions#check}).
 */
final class CallerGate implements ServerInterceptor {
  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    RequestContext context = RequestContextAdapter.REQUEST_CONTEXT_KEY.get();
    try {
      Permissions.authenticated(
          context == null ? null : context.get(Auth2Constants.PEER_IDENTITY_KEY));
    } catch (RuntimeException refused) {
      StatusRuntimeException status = (StatusRuntimeException) StatusUtils.toGrpcException(refused);
      Metadata trailers = status.getTrailers();
      call.close(status.getStatus(), trailers == null ? new Metadata() : trailers);
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
