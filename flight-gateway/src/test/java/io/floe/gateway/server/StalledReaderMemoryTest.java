package io.floe.gateway.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightFrame;
import io.floe.gateway.ForwardingBatchSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A reader that takes one batch and then neither reads, cancels nor disconnects cannot keep the
 * batches its stream had queued: after the stall timeout, or as soon as the stream's slice is
 * withdrawn, the node resets the stream and every buffer comes back to the allocator, with the
 * default 64 MiB stream buffer (which holds the whole answer, so the source ends long before the
 * reader stops) as with a small one. Real Flight Java clients over 127.0.0.1.
 */
@Timeout(120)
class StalledReaderMemoryTest {
  private static final Schema SCHEMA =
      new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));

  /** Rows per batch: 1 MiB of longs. */
  private static final int ROWS = 1 << 17;

  private static final int DEFAULT_BUFFER = 64 << 20;

  private BufferAllocator root;
  private BufferAllocator data;
  private FloeFlightServer server;
  private SimpleMeterRegistry registry;
  private final List<FlightClient> clients = new ArrayList<>();
  private final Streams streams = new Streams();

  @BeforeEach
  void allocators() {
    root = new RootAllocator();
    data = root.newChildAllocator("data", 0, Long.MAX_VALUE);
  }

  @AfterEach
  void stop() throws Exception {
    for (FlightClient client : clients) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
    data.close();
    root.close();
  }

  @Test
  void aStoppedReaderCannotPinWhatTheDefaultStreamBufferHolds() throws Exception {
    Duration stallTimeout = Duration.ofSeconds(2);
    start(DEFAULT_BUFFER, stallTimeout);
    // 24 MiB: less than the stream buffer, so the whole answer is queued and the source ends.
    streams.answer = () -> new Batches(data, 24);
    FlightClient stopped = client();
    try (FlightStream stream = stopped.getStream(new Ticket(new byte[] {1}))) {
      assertThat(stream.next()).isTrue();
      await().atMost(Duration.ofSeconds(10)).until(() -> streams.closed.get() == 1);
      long pinned = data.getAllocatedMemory();
      long stoppedAt = System.nanoTime();

      // Meanwhile the node serves another reader whole.
      assertThat(drain(client(), new Ticket(new byte[] {2}))).isEqualTo(24L * ROWS);

      await()
          .atMost(stallTimeout.plusSeconds(25))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> data.getAllocatedMemory() == 0);
      report("default 64 MiB buffer, source ended", pinned, stoppedAt, stallTimeout);
      assertThat(ended("stalled")).isEqualTo(1);
      assertThat(ended("completed")).isEqualTo(1);
      assertThatThrownBy(() -> drainRest(stream)).isInstanceOf(FlightRuntimeException.class);
    }
  }

  @Test
  void aStalledStreamWithASmallBufferGivesBackWhatTheTransportQueued() throws Exception {
    Duration stallTimeout = Duration.ofSeconds(2);
    start(1 << 20, stallTimeout);
    streams.answer = () -> new Batches(data, 64);
    try (FlightStream stream = client().getStream(new Ticket(new byte[] {3}))) {
      assertThat(stream.next()).isTrue();
      long stoppedAt = System.nanoTime();
      await().atMost(Duration.ofSeconds(2)).until(() -> data.getAllocatedMemory() > 0);
      long pinned = data.getAllocatedMemory();
      await()
          .atMost(stallTimeout.plusSeconds(25))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> data.getAllocatedMemory() == 0);
      report("1 MiB buffer, source still open", pinned, stoppedAt, stallTimeout);
      assertThat(streams.closed.get()).isEqualTo(1);
      assertThat(ended("stalled")).isEqualTo(1);
      assertThatThrownBy(() -> drainRest(stream)).isInstanceOf(FlightRuntimeException.class);
    }
  }

  @Test
  void aWithdrawnSliceEndsItsStreamsAtOnceWhateverTheReaderDoes() throws Exception {
    // A stall timeout that never comes into it: the drop alone must free the memory.
    start(DEFAULT_BUFFER, Duration.ofMinutes(5));
    AtomicBoolean dropped = new AtomicBoolean();
    streams.withdrawn = dropped::get;
    streams.answer = () -> new Batches(data, 24);
    List<FlightStream> stopped = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        FlightStream stream = client().getStream(new Ticket(new byte[] {(byte) (10 + i)}));
        assertThat(stream.next()).isTrue();
        stopped.add(stream);
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> streams.closed.get() == 3);
      long pinned = data.getAllocatedMemory();
      assertThat(pinned).isPositive();

      dropped.set(true);
      long droppedAt = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> data.getAllocatedMemory() == 0);
      report("3 readers, dataset dropped", pinned, droppedAt, Duration.ZERO);
      assertThat(ended("withdrawn")).isEqualTo(3);
      for (FlightStream stream : stopped) {
        assertThatThrownBy(() -> drainRest(stream)).isInstanceOf(FlightRuntimeException.class);
      }
    } finally {
      for (FlightStream stream : stopped) {
        try {
          stream.close();
        } catch (Exception e) {
          // already ended by the server
        }
      }
    }
  }

  @Test
  void aWithdrawnSliceEndsAReaderThatKeepsReadingWithTheCode() throws Exception {
    start(1 << 20, Duration.ofMinutes(5));
    AtomicBoolean dropped = new AtomicBoolean();
    streams.withdrawn = dropped::get;
    streams.answer = () -> new Batches(data, 1_000);
    try (FlightStream stream = client().getStream(new Ticket(new byte[] {20}))) {
      assertThat(stream.next()).isTrue();
      dropped.set(true);
      assertThatThrownBy(() -> drainRest(stream))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e ->
                  assertThat(io.floe.protocol.ErrorCode.of(e))
                      .contains(io.floe.protocol.ErrorCode.SLICE_NOT_HELD));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> data.getAllocatedMemory() == 0);
    assertThat(ended("withdrawn")).isEqualTo(1);
  }

  private void start(int streamBuffer, Duration stallTimeout) throws Exception {
    registry = new SimpleMeterRegistry();
    server =
        FloeFlightServer.start(
            root.newChildAllocator("flight", 0, Long.MAX_VALUE),
            streams,
            new FloeFlightServer.Settings(
                Location.forGrpcInsecure("127.0.0.1", 0),
                streamBuffer,
                stallTimeout,
                new io.floe.auth.BearerAuthenticator(io.floe.auth.AuthSettings.anonymousOperator()),
                Optional.empty(),
                new StreamMetrics(registry)));
  }

  private FlightClient client() {
    FlightClient client =
        FlightClient.builder(root, Location.forGrpcInsecure("127.0.0.1", server.port())).build();
    clients.add(client);
    return client;
  }

  private double ended(String outcome) {
    return registry.get("floe.streams.ended").tag("outcome", outcome).counter().count();
  }

  private static long drain(FlightClient client, Ticket ticket) throws Exception {
    long rows = 0;
    try (FlightStream stream = client.getStream(ticket)) {
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
    }
    return rows;
  }

  private static void drainRest(FlightStream stream) {
    while (stream.next()) {
      // what was still in flight
    }
  }

  private static void report(String what, long pinned, long since, Duration stallTimeout) {
    System.out.printf(
        "%s: %.1f MiB pinned, back to 0 after %.1f s (stall timeout %s)%n",
        what, pinned / 1048576.0, (System.nanoTime() - since) / 1e9, stallTimeout);
  }

  /** Answers every ticket with what {@link #answer} makes, counting the sources closed. */
  private static final class Streams extends NoOpFlightProducer implements TicketStreams {
    volatile java.util.function.Supplier<BatchSource> answer;
    volatile java.util.function.BooleanSupplier withdrawn = () -> false;
    final AtomicInteger closed = new AtomicInteger();

    @Override
    public BatchSource open(io.floe.auth.Caller caller, Ticket ticket) {
      BatchSource source = answer.get();
      java.util.function.BooleanSupplier gone = withdrawn;
      return new ForwardingBatchSource(source) {
        @Override
        public boolean withdrawn() {
          return gone.getAsBoolean();
        }

        @Override
        public void close() {
          super.close();
          closed.incrementAndGet();
        }
      };
    }
  }

  /** {@code count} batches of {@link #ROWS} longs, each in buffers of its own. */
  private static final class Batches implements BatchSource {
    private final BufferAllocator allocator;
    private final int count;
    private int sent;

    Batches(BufferAllocator allocator, int count) {
      this.allocator = allocator;
      this.count = count;
    }

    @Override
    public FlightFrame schema() {
      return FlightFrame.schema(SCHEMA);
    }

    @Override
    public FlightFrame next() {
      if (sent == count) {
        return null;
      }
      try (VectorSchemaRoot batch = VectorSchemaRoot.create(SCHEMA, allocator)) {
        BigIntVector ids = (BigIntVector) batch.getVector("id");
        ids.allocateNew(ROWS);
        for (int i = 0; i < ROWS; i++) {
          ids.set(i, (long) sent * ROWS + i);
        }
        batch.setRowCount(ROWS);
        sent++;
        try (ArrowRecordBatch record = new VectorUnloader(batch).getRecordBatch()) {
          return FlightFrame.batch(record);
        }
      }
    }

    @Override
    public void close() {}
  }
}
