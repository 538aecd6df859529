package io.floe.gateway.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightFrame;
import io.floe.gateway.FlightFrameMarshaller;
import io.floe.gateway.ForwardingBatchSource;
import io.floe.protocol.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
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
 * Floe's DoGet against Arrow Flight's own Java client over 127.0.0.1: the batches arrive whole and
 * in order (values, nulls, odd buffer lengths that need padding), failures reach the reader as the
 * Flight status the source threw, a cancelled or stalled stream closes its source, and every buffer
 * the server sent by reference is given back.
 */
@Timeout(60)
class FloeFlightServerTest {
  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Field.nullable("id", new ArrowType.Int(64, true)),
              Field.nullable("name", ArrowType.Utf8.INSTANCE)));

  private BufferAllocator root;
  private BufferAllocator data;
  private FloeFlightServer server;
  private FlightClient client;
  private final Streams streams = new Streams();

  @BeforeEach
  void start() throws Exception {
    root = new RootAllocator();
    data = root.newChildAllocator("data", 0, Long.MAX_VALUE);
    server =
        FloeFlightServer.start(
            root.newChildAllocator("flight", 0, Long.MAX_VALUE),
            streams,
            new FloeFlightServer.Settings(
                Location.forGrpcInsecure("127.0.0.1", 0),
                1 << 20,
                Duration.ofSeconds(2),
                new io.floe.auth.BearerAuthenticator(
                    io.floe.auth.AuthSettings.anonymousOperator())));
    client =
        FlightClient.builder(root, Location.forGrpcInsecure("127.0.0.1", server.port())).build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    server.close();
    data.close();
    root.close();
  }

  @Test
  void everyBatchArrivesWholeAndInOrder() throws Exception {
    streams.answer = () -> new Batches(data, 20, 1_001);
    List<String> seen = new ArrayList<>();
    long rows = 0;
    try (FlightStream stream =
        client.getStream(new Ticket("all".getBytes(StandardCharsets.UTF_8)))) {
      assertThat(stream.getSchema()).isEqualTo(SCHEMA);
      while (stream.next()) {
        VectorSchemaRoot batch = stream.getRoot();
        BigIntVector ids = (BigIntVector) batch.getVector("id");
        VarCharVector names = (VarCharVector) batch.getVector("name");
        for (int i = 0; i < batch.getRowCount(); i++) {
          long id = rows + i;
          if (id % 7 == 0) {
            assertThat(ids.isNull(i)).isTrue();
          } else {
            assertThat(ids.get(i)).isEqualTo(id);
          }
          seen.add(names.getObject(i).toString());
        }
        rows += batch.getRowCount();
      }
    }
    assertThat(rows).isEqualTo(20 * 1_001);
    assertThat(FlightFrameMarshaller.framesCopied()).as("frames copied by gRPC").isZero();
    assertThat(seen.get(12_345)).isEqualTo(Batches.name(12_345));
    await().atMost(Duration.ofSeconds(5)).until(() -> data.getAllocatedMemory() == 0);
    assertThat(streams.closed.get()).isEqualTo(1);
  }

  @Test
  void anEmptyAnswerHasItsSchema() throws Exception {
    streams.answer = () -> new Batches(data, 0, 10);
    try (FlightStream stream = client.getStream(new Ticket(new byte[] {1}))) {
      assertThat(stream.getSchema()).isEqualTo(SCHEMA);
      assertThat(stream.next()).isFalse();
    }
    assertThat(streams.closed.get()).isEqualTo(1);
  }

  @Test
  void aRefusedTicketGetsTheStatusItWasRefusedWith() {
    streams.answer =
        () -> {
          throw CallStatus.NOT_FOUND.withDescription("No slice 'x' here").toRuntimeException();
        };
    assertThatThrownBy(() -> drain(new Ticket(new byte[] {2})))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND);
              assertThat(e.status().description()).isEqualTo("No slice 'x' here");
            });
  }

  @Test
  void aFailureMidStreamEndsItWithThatStatusAndClosesTheSource() {
    streams.answer =
        () ->
            new Batches(data, 10, 100) {
              @Override
              public FlightFrame next() {
                if (sent == 3) {
                  throw new IllegalArgumentException("Batch 3 is bad");
                }
                return super.next();
              }
            };
    assertThatThrownBy(() -> drain(new Ticket(new byte[] {3})))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              // A failure of the node's own making, not the reader's: INTERNAL, code and all.
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.INTERNAL);
              assertThat(ErrorCode.of(e)).contains(ErrorCode.INTERNAL);
              assertThat(e.status().description()).contains("Batch 3 is bad");
            });
    await().atMost(Duration.ofSeconds(5)).until(() -> streams.closed.get() == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> data.getAllocatedMemory() == 0);
  }

  @Test
  void aReaderThatStopsReadingIsCancelledOrTimedOutAndTheSourceClosed() throws Exception {
    // 64 batches of ~1 MB: far more than the transport buffers, so the server must wait.
    streams.answer = () -> new Batches(data, 64, 60_000);
    try (FlightStream stream = client.getStream(new Ticket(new byte[] {4}))) {
      assertThat(stream.next()).isTrue();
      // The reader takes nothing more: after the stall timeout (2 s) the server gives up.
      await().atMost(Duration.ofSeconds(20)).until(() -> streams.closed.get() == 1);
      assertThatThrownBy(
              () -> {
                while (stream.next()) {
                  // drain what was in flight
                }
              })
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> data.getAllocatedMemory() == 0);
  }

  @Test
  void aReaderThatCancelsClosesTheSource() throws Exception {
    streams.answer = () -> new Batches(data, 64, 60_000);
    try (FlightStream stream = client.getStream(new Ticket(new byte[] {5}))) {
      assertThat(stream.next()).isTrue();
      stream.cancel("enough", null);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> streams.closed.get() == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> data.getAllocatedMemory() == 0);
  }

  private void drain(Ticket ticket) throws Exception {
    try (FlightStream stream = client.getStream(ticket)) {
      while (stream.next()) {
        // read everything
      }
    }
  }

  /** Answers every ticket with what {@link #answer} makes, counting the sources closed. */
  private static final class Streams extends NoOpFlightProducer implements TicketStreams {
    volatile java.util.function.Supplier<BatchSource> answer;
    final AtomicInteger closed = new AtomicInteger();

    @Override
    public BatchSource open(io.floe.auth.Caller caller, Ticket ticket) {
      BatchSource source = answer.get();
      return new ForwardingBatchSource(source) {
        @Override
        public void close() {
          super.close();
          closed.incrementAndGet();
        }
      };
    }
  }

  /** {@code count} batches of {@code rows} rows: ids with every 7th null, and names. */
  private static class Batches implements BatchSource {
    private final BufferAllocator allocator;
    private final int count;
    private final int rows;
    int sent;

    Batches(BufferAllocator allocator, int count, int rows) {
      this.allocator = allocator;
      this.count = count;
      this.rows = rows;
    }

    static String name(long id) {
      return "row-" + id + "-" + "x".repeat((int) (id % 5));
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
        VarCharVector names = (VarCharVector) batch.getVector("name");
        for (int i = 0; i < rows; i++) {
          long id = (long) sent * rows + i;
          if (id % 7 == 0) {
            ids.setNull(i);
          } else {
            ids.setSafe(i, id);
          }
          names.setSafe(i, name(id).getBytes(StandardCharsets.UTF_8));
        }
        batch.setRowCount(rows);
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
