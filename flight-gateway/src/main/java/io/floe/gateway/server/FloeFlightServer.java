package io.floe.gateway.server;

import io.floe.auth.Caller;
import io.floe.auth.Permissions;
import io.floe.auth.Role;
import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.FlightFrame;
import io.floe.gateway.FlightFrameMarshaller;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.arrow.flight.FlightConstants;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.RequestContext;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.auth.ServerAuthHandler;
import org.apache.arrow.flight.auth.ServerAuthInterceptor;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;
import org.apache.arrow.flight.grpc.RequestContextAdapter;
import org.apache.arrow.flight.grpc.ServerBackpressureThresholdInterceptor;
import org.apache.arrow.flight.grpc.StatusUtils;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A node's Flight server: Arrow Flight's own service for every method except DoGet, which Floe
 * answers itself with {@link FlightFrame}s (every byte off-heap, record batches by reference) paced
 * by gRPC's flow control ({@link DoGetCall}). The DoGet method is swapped through Flight's hook
 * into the gRPC server builder: gRPC keeps the last service registered under a name, so the Flight
 * service with Floe's DoGet replaces the one Flight registered. Middleware given to Flight applies
 * to every method, DoGet included, and {@link CallerGate} refuses every method to a caller the
 * authenticator did not pass, Handshake included (which then exchanges nothing: a caller with a
 * token gets OK).
 */
public final class FloeFlightServer implements AutoCloseable {
  private static final String DO_GET =
      MethodDescriptor.generateFullMethodName(FlightConstants.SERVICE, "DoGet");

  private final FlightServer server;
  private final ExecutorService executor;
  private final ScheduledExecutorService stallTimer;

  private FloeFlightServer(
      FlightServer server, ExecutorService executor, ScheduledExecutorService stallTimer) {
    this.server = server;
    this.executor = executor;
    this.stallTimer = stallTimer;
  }

  /** What a node's server answers with, and how it treats readers. */
  public record Settings(
      Location location,
      int backpressureThresholdBytes,
      Duration stallTimeout,
      CallHeaderAuthenticator authenticator,
      Optional<SslContext> tls,
      StreamMetrics metrics) {
    /** A plain server whose stream meters nobody reads (tests). */
    public Settings(
        Location location,
        int backpressureThresholdBytes,
        Duration stallTimeout,
        CallHeaderAuthenticator authenticator) {
      this(
          location,
          backpressureThresholdBytes,
          stallTimeout,
          authenticator,
          Optional.empty(),
          StreamMetrics.unregistered());
    }
  }

  /**
   * Binds and starts the server. {@code producer} answers every method but DoGet; {@code streams}
   * answers DoGet.
   */
  public static <P extends FlightProducer & TicketStreams> FloeFlightServer start(
      BufferAllocator allocator, P producer, Settings settings) throws IOException {
    ExecutorService executor = Executors.newCachedThreadPool(named("flight-call-"));
    ScheduledExecutorService stallTimer =
        Executors.newSingleThreadScheduledExecutor(named("flight-stall-timer-"));
    try {
      ServerServiceDefinition service =
          ServerInterceptors.intercept(
              withFloeDoGet(
                  FlightGrpcUtils.createFlightService(
                      allocator, producer, ServerAuthHandler.NO_OP, executor),
                  new DoGetMethod(
                      producer, settings.stallTimeout(), stallTimer, settings.metrics())),
              new ServerBackpressureThresholdInterceptor(settings.backpressureThresholdBytes()),
              new ServerAuthInterceptor(ServerAuthHandler.NO_OP),
              new CallerGate());
      FlightServer.Builder builder =
          FlightServer.builder(allocator, settings.location(), producer)
              .executor(executor)
              .backpressureThreshold(settings.backpressureThresholdBytes())
              // A middleware: it runs for every method of the server, Floe's DoGet included.
              .headerAuthenticator(settings.authenticator())
              .transportHint(
                  "grpc.builderConsumer",
                  (Consumer<NettyServerBuilder>)
                      grpc -> {
                        grpc.addService(service);
                        grpc.addStreamTracerFactory(new StreamResets(DO_GET));
                        // Here rather than Flight's useTls: the key manager reloads rotated files.
                        settings.tls().ifPresent(grpc::sslContext);
                      });
      FlightServer server = builder.build().start();
      return new FloeFlightServer(server, executor, stallTimer);
    } catch (IOException | RuntimeException e) {
      executor.shutdownNow();
      stallTimer.shutdownNow();
      throw e;
    }
  }

  public int port() {
    return server.getPort();
  }

  public Location location() {
    return server.getLocation();
  }

  /** Stops taking calls; running streams go on. */
  public void shutdown() {
    server.shutdown();
  }

  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return server.awaitTermination(timeout, unit);
  }

  @Override
  public void close() throws InterruptedException {
    try {
      server.close();
    } finally {
      stallTimer.shutdownNow();
      executor.shutdownNow();
    }
  }

  /** Flight's service definition with its DoGet method replaced by Floe's. */
  private static ServerServiceDefinition withFloeDoGet(BindableService flight, DoGetMethod doGet) {
    ServerServiceDefinition base = flight.bindService();
    MethodDescriptor<Flight.Ticket, FlightFrame> descriptor =
        MethodDescriptor.<Flight.Ticket, FlightFrame>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName(DO_GET)
            .setSampledToLocalTracing(false)
            .setRequestMarshaller(ProtoUtils.marshaller(Flight.Ticket.getDefaultInstance()))
            .setResponseMarshaller(FlightFrameMarshaller.INSTANCE)
            .setSchemaDescriptor(FlightServiceGrpc.getDoGetMethod().getSchemaDescriptor())
            .build();
    ServiceDescriptor.Builder methods =
        ServiceDescriptor.newBuilder(FlightConstants.SERVICE)
            .setSchemaDescriptor(base.getServiceDescriptor().getSchemaDescriptor())
            .addMethod(descriptor);
    for (MethodDescriptor<?, ?> method : base.getServiceDescriptor().getMethods()) {
      if (!DO_GET.equals(method.getFullMethodName())) {
        methods.addMethod(method);
      }
    }
    ServerServiceDefinition.Builder service =
        ServerServiceDefinition.builder(methods.build())
            .addMethod(descriptor, ServerCalls.asyncServerStreamingCall(doGet));
    for (ServerMethodDefinition<?, ?> method : base.getMethods()) {
      if (!DO_GET.equals(method.getMethodDescriptor().getFullMethodName())) {
        service.addMethod(method);
      }
    }
    return service.build();
  }

  private static final class DoGetMethod
      implements ServerCalls.ServerStreamingMethod<Flight.Ticket, FlightFrame> {
    private final TicketStreams streams;
    private final Duration stallTimeout;
    private final ScheduledExecutorService stallTimer;
    private final StreamMetrics metrics;

    DoGetMethod(
        TicketStreams streams,
        Duration stallTimeout,
        ScheduledExecutorService stallTimer,
        StreamMetrics metrics) {
      this.streams = streams;
      this.stallTimeout = stallTimeout;
      this.stallTimer = stallTimer;
      this.metrics = metrics;
    }

    @Override
    public void invoke(Flight.Ticket request, StreamObserver<FlightFrame> observer) {
      BatchSource source;
      try {
        // The same check as every other request's: the caller the auth middleware established.
        RequestContext context = RequestContextAdapter.REQUEST_CONTEXT_KEY.get();
        Caller caller =
            Permissions.check(
                context == null ? null : context.get(Auth2Constants.PEER_IDENTITY_KEY),
                Role.READER,
                "Reading a ticket");
        source = streams.open(caller, new Ticket(request.getTicket().toByteArray()));
      } catch (RuntimeException e) {
        observer.onError(StatusUtils.toGrpcException(FlightErrors.wrap(e)));
        return;
      }
      DoGetCall.start(
          (ServerCallStreamObserver<FlightFrame>) observer,
          source,
          StreamResets.currentCall(),
          stallTimeout,
          stallTimer,
          metrics);
    }
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
