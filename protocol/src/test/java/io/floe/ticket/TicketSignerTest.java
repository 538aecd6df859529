package io.floe.ticket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.JobRead;
import io.floe.job.OrderSettings;
import io.floe.job.TailPolicy;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.tenant.Owner;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.arrow.flight.Ticket;
import org.junit.jupiter.api.Test;

/** Both ticket kinds through one signer: what it signs it reads back, and nothing else. */
class TicketSignerTest {
  private static final byte[] SECRET = "0123456789abcdef0123".getBytes(StandardCharsets.UTF_8);
  private static final Instant NOW = Instant.parse("2026-11-24T08:00:00Z");

  private static final FloeTicket SHARD = new FloeTicket("events", "events/g1-s0", 10, 250);
  private static final JobTicket JOB =
      new JobTicket(
          "events",
          "grpc+tcp://10.0.0.7:47470",
          "placement-1",
          "train",
          new JobRead(
              "fp-1", 4, new OrderSettings(7, true, 100, 4), 64, TailPolicy.PAD, 3, 1, 2, 40, 3),
          List.of("id", "label"));

  private static final Owner TRAINER = new Owner("team-a", "trainer-1");

  private static TicketSigner signer(Instant at) {
    return new TicketSigner(SECRET, Duration.ofMinutes(10), Clock.fixed(at, ZoneOffset.UTC));
  }

  @Test
  void aSignedTicketOfEitherKindReadsBackAsWhatWasSigned() {
    TicketSigner signer = signer(NOW);
    assertThat(signer.verify(signer.sign(SHARD))).isEqualTo(SHARD);
    assertThat(signer.verify(signer.sign(JOB))).isEqualTo(JOB);
    assertThat(JOB.read().batchCount()).isEqualTo(13); // 2, 5, ..., 38
  }

  /**
   * Tickets of single-row orders sign the text they signed before runs existed, and a ticket
   * written by such a node (no {@code run_rows}) verifies and reads as single rows; a run order's
   * ticket signs its run length, so a node that knows no runs would refuse it.
   */
  @Test
  void singleRowTicketsSignAsBeforeRunsAndRunTicketsSignTheirRuns() {
    TicketSigner signer = signer(NOW);
    assertThat(JOB.canonical()).doesNotContain("run_rows").endsWith("\n2\n40\n3");
    ObjectNode older = Json.parseObject(signer.sign(JOB).getBytes(), "ticket");
    older.remove("run_rows");
    assertThat(((JobTicket) signer.verify(new Ticket(Json.bytes(older)))).read().order().runRows())
        .isEqualTo(1);

    JobRead read = JOB.read();
    JobTicket runs =
        withRead(
            new JobRead(
                read.layout(),
                read.epoch(),
                new OrderSettings(7, true, 100, 4, 10),
                read.batchRows(),
                read.tail(),
                read.worldSize(),
                read.rank(),
                read.batchFrom(),
                read.batchTo(),
                read.batchStep()));
    assertThat(runs.canonical()).isEqualTo(JOB.canonical() + "\nrun_rows=10");
    assertThat(signer.verify(signer.sign(runs))).isEqualTo(runs);
    ObjectNode altered = Json.parseObject(signer.sign(runs).getBytes(), "ticket");
    altered.remove("run_rows");
    assertRefused(signer, altered, "signature does not match");
  }

  /**
   * A ticket for one global batch per record batch signs as tickets did before grouping and carries
   * no {@code batches_per_message}; a grouped ticket signs it, so taking it out (which a node that
   * cannot group would do) breaks the signature.
   */
  @Test
  void groupedTicketsSignHowManyBatchesARecordBatchHolds() {
    TicketSigner signer = signer(NOW);
    assertThat(JOB.canonical()).doesNotContain("batches_per_message");
    assertThat(Json.parseObject(signer.sign(JOB).getBytes(), "ticket").has("batches_per_message"))
        .isFalse();
    JobTicket grouped =
        new JobTicket(
            JOB.dataset(), JOB.holder(), JOB.placement(), JOB.job(), JOB.read(), JOB.columns(), 8);
    assertThat(grouped.canonical()).isEqualTo(JOB.canonical() + "\nbatches_per_message=8");
    assertThat(signer.verify(signer.sign(grouped))).isEqualTo(grouped);
    ObjectNode altered = Json.parseObject(signer.sign(grouped).getBytes(), "ticket");
    altered.remove("batches_per_message");
    assertRefused(signer, altered, "signature does not match");
  }

  /**
   * A ticket placed around nodes a reader could not reach signs those nodes: the serving node
   * places slices by them, so a reader who took one out would be served another placement's rows.
   */
  @Test
  void ticketsPlacedAroundNodesSignTheNodes() {
    TicketSigner signer = signer(NOW);
    assertThat(JOB.canonical()).doesNotContain("avoid");
    JobTicket avoiding =
        new JobTicket(
            JOB.dataset(),
            JOB.holder(),
            JOB.placement(),
            JOB.job(),
            JOB.read(),
            JOB.columns(),
            1,
            List.of("grpc+tcp://127.0.0.1:47471"));
    assertThat(avoiding.canonical())
        .isEqualTo(JOB.canonical() + "\navoid=[\"grpc+tcp://127.0.0.1:47471\"]");
    assertThat(signer.verify(signer.sign(avoiding))).isEqualTo(avoiding);
    ObjectNode altered = Json.parseObject(signer.sign(avoiding).getBytes(), "ticket");
    altered.remove("avoid");
    assertRefused(signer, altered, "signature does not match");
  }

  /**
   * A ticket bound to its caller carries the caller and signs it after the expiry; an unbound one
   * (auth off) has neither and signs exactly the text of tickets from before binding, so its bytes
   * are what they were and such tickets still verify.
   */
  @Test
  void anUnboundTicketSignsAsBeforeAndABoundOneSignsItsCaller() throws Exception {
    TicketSigner signer = signer(NOW);
    long expires = NOW.plus(Duration.ofMinutes(10)).toEpochMilli();
    for (SignedTicket ticket : List.of(SHARD, JOB)) {
      Ticket unbound = signer.sign(ticket);
      assertThat(unbound.getBytes()).isEqualTo(signer.sign(ticket, null).getBytes());
      ObjectNode before = Json.object();
      ticket.writeTo(before);
      before.put("expires", expires);
      before.put("sig", hmac(ticket.canonical() + "\n" + expires));
      assertThat(unbound.getBytes()).isEqualTo(Json.bytes(before));

      Ticket bound = signer.sign(ticket, TRAINER);
      ObjectNode boundJson = Json.parseObject(bound.getBytes(), "ticket");
      assertThat(boundJson.get("caller").toString())
          .isEqualTo("{\"tenant\":\"team-a\",\"name\":\"trainer-1\"}");
      assertThat(boundJson.get("sig").asText())
          .isEqualTo(
              hmac(
                  ticket.canonical()
                      + "\n"
                      + expires
                      + "\ncaller={\"tenant\":\"team-a\",\"name\":\"trainer-1\"}"));
      assertThat(signer.verify(bound, TRAINER)).isEqualTo(ticket);
      // An unbound ticket stays anyone's, with a token or without.
      assertThat(signer.verify(unbound, TRAINER)).isEqualTo(ticket);
      assertThat(signer.verify(unbound)).isEqualTo(ticket);
    }
  }

  /**
   * Only the caller a ticket is bound to may present it, by tenant and name (any process with its
   * token, on any node with the cluster's secret); taking the caller out or naming another one
   * breaks the signature rather than unbinding the ticket.
   */
  @Test
  void aBoundTicketIsRefusedToAnyOtherCallerAndCannotBeRebound() {
    TicketSigner signer = signer(NOW);
    Ticket bound = signer.sign(JOB, TRAINER);
    assertThat(signer(NOW.plusSeconds(5)).verify(bound, new Owner("team-a", "trainer-1")))
        .isEqualTo(JOB);
    for (Owner other :
        new Owner[] {new Owner("team-a", "trainer-2"), new Owner("team-b", "trainer-1"), null}) {
      assertThatThrownBy(() -> signer.verify(bound, other))
          .satisfies(
              e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_WRONG_CALLER),
              e ->
                  assertThat(((org.apache.arrow.flight.FlightRuntimeException) e).status().code())
                      .isEqualTo(org.apache.arrow.flight.FlightStatusCode.UNAUTHORIZED))
          .hasMessageContaining("'events'")
          .hasMessageContaining("planned by 'trainer-1' of tenant 'team-a'")
          .hasMessageContaining(other == null ? "without a token" : "'" + other.caller() + "'");
    }
    ObjectNode unbound = Json.parseObject(bound.getBytes(), "ticket");
    unbound.remove("caller");
    assertRefused(signer, unbound, "signature does not match");
    ObjectNode rebound = Json.parseObject(bound.getBytes(), "ticket");
    ((ObjectNode) rebound.get("caller")).put("name", "trainer-2");
    assertThatThrownBy(
            () -> signer.verify(new Ticket(Json.bytes(rebound)), new Owner("team-a", "trainer-2")))
        .satisfies(e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_INVALID))
        .hasMessageContaining("signature does not match");
    ObjectNode malformed = Json.parseObject(bound.getBytes(), "ticket");
    malformed.put("caller", "team-a/trainer-1");
    assertRefused(signer, malformed, "not one of Floe's");
  }

  private static String hmac(String text) throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(SECRET, "HmacSHA256"));
    return java.util.HexFormat.of().formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void changingAnyFieldBreaksTheSignature() {
    TicketSigner signer = signer(NOW);
    ObjectNode shard = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    shard.put("to", 100_000);
    assertRefused(signer, shard, "signature does not match");

    ObjectNode job = Json.parseObject(signer.sign(JOB).getBytes(), "ticket");
    job.put("rank", 2);
    assertRefused(signer, job, "signature does not match");
  }

  /**
   * The signed text lists each field separately from the JSON a ticket is sent as: every field of
   * either kind must change it, or a reader could alter that field without breaking the signature.
   */
  @Test
  void theSignatureCoversEveryFieldOfBothKinds() throws Exception {
    for (SignedTicket ticket : List.of(SHARD, JOB)) {
      for (java.lang.reflect.RecordComponent field : ticket.getClass().getRecordComponents()) {
        assertCovered(
            ticket, (SignedTicket) withChanged((Record) ticket, field.getName()), field.getName());
      }
    }
    // A job ticket's read, down to each of its order settings.
    for (java.lang.reflect.RecordComponent field : JobRead.class.getRecordComponents()) {
      JobRead read = (JobRead) withChanged(JOB.read(), field.getName());
      assertCovered(JOB, withRead(read), "read." + field.getName());
    }
    for (java.lang.reflect.RecordComponent field : OrderSettings.class.getRecordComponents()) {
      OrderSettings order = (OrderSettings) withChanged(JOB.read().order(), field.getName());
      JobRead read = JOB.read();
      assertCovered(
          JOB,
          withRead(
              new JobRead(
                  read.layout(),
                  read.epoch(),
                  order,
                  read.batchRows(),
                  read.tail(),
                  read.worldSize(),
                  read.rank(),
                  read.batchFrom(),
                  read.batchTo(),
                  read.batchStep())),
          "read.order." + field.getName());
    }
  }

  private static JobTicket withRead(JobRead read) {
    return new JobTicket(
        JOB.dataset(), JOB.holder(), JOB.placement(), JOB.job(), read, JOB.columns());
  }

  private static void assertCovered(SignedTicket ticket, SignedTicket changed, String field) {
    assertThat(changed.canonical())
        .as("the signed text of a %s with another %s", ticket.getClass().getSimpleName(), field)
        .isNotEqualTo(ticket.canonical());
    ObjectNode written = Json.object();
    changed.writeTo(written);
    assertThat(written.toString()).as("the JSON of another %s", field).isNotEqualTo(json(ticket));
  }

  private static String json(SignedTicket ticket) {
    ObjectNode node = Json.object();
    ticket.writeTo(node);
    return node.toString();
  }

  /** A copy of {@code ticket} with one component changed (and a slice of the changed dataset). */
  private static Record withChanged(Record ticket, String name) throws Exception {
    java.lang.reflect.RecordComponent[] fields = ticket.getClass().getRecordComponents();
    Object[] values = new Object[fields.length];
    Class<?>[] types = new Class<?>[fields.length];
    for (int i = 0; i < fields.length; i++) {
      types[i] = fields[i].getType();
      values[i] = fields[i].getAccessor().invoke(ticket);
      if (fields[i].getName().equals(name)) {
        values[i] = changed(values[i]);
      }
    }
    if (name.equals("dataset")) {
      // A ticket's slice belongs to its dataset.
      for (int i = 0; i < fields.length; i++) {
        if (fields[i].getName().equals("sliceId")) {
          values[i] = values[i].toString().replace("events/", "eventsx/");
        }
      }
    }
    return ticket.getClass().getDeclaredConstructor(types).newInstance(values);
  }

  private static Object changed(Object value) {
    if (value instanceof String text) {
      return text + "x";
    }
    if (value instanceof Long number) {
      return number + 1;
    }
    if (value instanceof Integer number) {
      return number + 1;
    }
    if (value instanceof Boolean flag) {
      return !flag;
    }
    if (value instanceof JobRead read) {
      return new JobRead(
          read.layout() + "x",
          read.epoch(),
          read.order(),
          read.batchRows(),
          read.tail(),
          read.worldSize(),
          read.rank(),
          read.batchFrom(),
          read.batchTo(),
          read.batchStep());
    }
    if (value instanceof TailPolicy tail) {
      return tail == TailPolicy.PAD ? TailPolicy.DROP : TailPolicy.PAD;
    }
    if (value instanceof List<?> list) {
      return List.of("other");
    }
    if (value instanceof OrderSettings order) {
      return new OrderSettings(
          order.seed() + 1,
          order.shuffle(),
          order.blockRows(),
          order.windowBlocks(),
          order.runRows());
    }
    throw new AssertionError("No change known for " + value);
  }

  @Test
  void anotherClustersSecretAnExpiredTicketAndAnUnsignedOneAreRefused() {
    Ticket signed = signer(NOW).sign(SHARD);
    TicketSigner other =
        new TicketSigner(
            "another-secret-of-16+".getBytes(StandardCharsets.UTF_8),
            Duration.ofMinutes(10),
            Clock.fixed(NOW, ZoneOffset.UTC));
    assertThatThrownBy(() -> other.verify(signed)).hasMessageContaining("signature");
    assertThatThrownBy(() -> signer(NOW.plus(Duration.ofMinutes(11))).verify(signed))
        .hasMessageContaining("expired");

    ObjectNode unsigned = Json.parseObject(signed.getBytes(), "ticket");
    unsigned.remove("sig");
    assertRefused(signer(NOW), unsigned, "not signed");
  }

  @Test
  void bytesThatAreNoTicketAreRefusedAsInvalidTickets() {
    Ticket garbage = new Ticket("{\"dataset\": 3".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> signer(NOW).verify(garbage))
        .satisfies(e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_INVALID))
        .hasMessageContaining("not one of Floe's");
  }

  @Test
  void aTicketMustNameASliceOfItsDataset() {
    assertThatThrownBy(() -> new FloeTicket("events", "other/g1-s0", 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void namesInATicketAreCheckedBeforeItsSignatureAndQuotedShort() {
    TicketSigner signer = signer(NOW);
    String huge = "n".repeat(100_000);
    ObjectNode shard = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    shard.put("dataset", huge);
    shard.put("slice", huge + "/g1-s0");
    assertRefused(signer, shard, "Invalid dataset name");
    ObjectNode job = Json.parseObject(signer.sign(JOB).getBytes(), "ticket");
    job.put("job", huge);
    assertRefused(signer, job, "Invalid job id");
    for (ObjectNode forged : List.of(shard, job)) {
      assertThatThrownBy(() -> signer.verify(new Ticket(Json.bytes(forged))))
          .satisfies(
              e -> assertThat(e.getMessage()).hasSizeLessThan(300).contains("(100000 characters)"));
    }
  }

  private static void assertRefused(TicketSigner signer, ObjectNode node, String why) {
    assertThatThrownBy(() -> signer.verify(new Ticket(Json.bytes(node))))
        .satisfies(e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_INVALID))
        .hasMessageContaining(why);
  }
}
