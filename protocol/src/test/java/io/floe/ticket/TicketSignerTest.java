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
   * The signature covers the ticket as sent up to its {@code sig}: the bytes its codec writes (the
   * {@code kind} first, then its fields), then for a bound ticket its caller, then its expiry.
   */
  @Test
  void theSignatureCoversTheCodecsBytesAsSent() throws Exception {
    TicketSigner signer = signer(NOW);
    long expires = NOW.plus(Duration.ofMinutes(10)).toEpochMilli();
    for (SignedTicket ticket : List.of(SHARD, JOB)) {
      for (Owner caller : new Owner[] {null, TRAINER}) {
        ObjectNode sent = Json.parseObject(signer.sign(ticket, caller).getBytes(), "ticket");
        String sig = sent.remove("sig").asText();
        assertThat(sig).isEqualTo(hmac(Json.bytes(sent)));
        ObjectNode expected = TicketCodec.encodeAny(ticket);
        if (caller != null) {
          expected.set(
              "caller",
              Json.parseObject(
                  "{\"tenant\":\"team-a\",\"name\":\"trainer-1\"}".getBytes(StandardCharsets.UTF_8),
                  "caller"));
        }
        expected.put("expires", expires);
        assertThat(Json.string(sent)).isEqualTo(Json.string(expected));
      }
    }
    assertThat(Json.string(TicketCodec.encodeAny(SHARD)))
        .isEqualTo(
            "{\"kind\":\"slice\",\"dataset\":\"events\",\"slice\":\"events/g1-s0\",\"from\":10,\"to\":250}");
  }

  /**
   * A node checks the signature over the ticket it read, encoded again, not over the bytes it got:
   * the same values in another field order or spacing are the same ticket, and a repeated key is
   * checked as the value the node goes on to serve.
   */
  @Test
  void fieldOrderAndSpacingDoNotChangeATicketButARepeatedKeyCannotSlipPastTheSignature()
      throws Exception {
    TicketSigner signer = signer(NOW);
    ObjectNode sent = Json.parseObject(signer.sign(JOB, TRAINER).getBytes(), "ticket");
    List<String> names = new java.util.ArrayList<>();
    sent.fieldNames().forEachRemaining(names::add);
    java.util.Collections.reverse(names);
    ObjectNode reordered = Json.object();
    names.forEach(name -> reordered.set(name, sent.get(name)));
    byte[] spaced =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .writerWithDefaultPrettyPrinter()
            .writeValueAsBytes(reordered);
    assertThat(new String(spaced, StandardCharsets.UTF_8)).startsWith("{\n  \"sig\"");
    assertThat(signer.verify(new Ticket(spaced), TRAINER)).isEqualTo(JOB);

    String text = Json.string(sent);
    // The last of a repeated key is the one read: first, the signed value is last; then another.
    Ticket signedLast =
        new Ticket(("{\"rank\":2," + text.substring(1)).getBytes(StandardCharsets.UTF_8));
    assertThat(signer.verify(signedLast, TRAINER)).isEqualTo(JOB);
    Ticket otherLast =
        new Ticket(
            (text.substring(0, text.length() - 1) + ",\"rank\":2}")
                .getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> signer.verify(otherLast, TRAINER))
        .satisfies(e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_INVALID))
        .hasMessageContaining("signature does not match");
  }

  /**
   * A field with a default (single-row runs, one global batch per record batch, no nodes avoided)
   * is left out while it has it, so such tickets carry no field a node that knows nothing of runs,
   * grouping or replicas would refuse; a ticket that uses one signs it, so taking it out (as such a
   * node would read it) breaks the signature rather than serving single rows, one batch per record
   * batch or another placement's slices.
   */
  @Test
  void fieldsWithDefaultsAreLeftOutUnlessUsedAndThenSigned() {
    TicketSigner signer = signer(NOW);
    ObjectNode plain = Json.parseObject(signer.sign(JOB).getBytes(), "ticket");
    assertThat(plain.has("run_rows")).isFalse();
    assertThat(plain.has("batches_per_message")).isFalse();
    assertThat(plain.has("avoid")).isFalse();
    assertThat(((JobTicket) signer.verify(signer.sign(JOB))).read().order().runRows()).isEqualTo(1);

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
    JobTicket grouped =
        new JobTicket(
            JOB.dataset(), JOB.holder(), JOB.placement(), JOB.job(), JOB.read(), JOB.columns(), 8);
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
    for (Object[] used :
        new Object[][] {
          {runs, "run_rows"}, {grouped, "batches_per_message"}, {avoiding, "avoid"}
        }) {
      JobTicket ticket = (JobTicket) used[0];
      String field = (String) used[1];
      assertThat(signer.verify(signer.sign(ticket))).isEqualTo(ticket);
      ObjectNode altered = Json.parseObject(signer.sign(ticket).getBytes(), "ticket");
      assertThat(altered.has(field)).as(field).isTrue();
      altered.remove(field);
      assertRefused(signer, altered, "signature does not match");
    }
  }

  /** An unbound ticket (the anonymous caller's) carries no caller, and anyone may present it. */
  @Test
  void anUnboundTicketHasNoCallerAndIsAnyones() {
    TicketSigner signer = signer(NOW);
    for (SignedTicket ticket : List.of(SHARD, JOB)) {
      Ticket unbound = signer.sign(ticket);
      assertThat(unbound.getBytes()).isEqualTo(signer.sign(ticket, null).getBytes());
      assertThat(Json.parseObject(unbound.getBytes(), "ticket").has("caller")).isFalse();
      Ticket bound = signer.sign(ticket, TRAINER);
      assertThat(Json.parseObject(bound.getBytes(), "ticket").get("caller").toString())
          .isEqualTo("{\"tenant\":\"team-a\",\"name\":\"trainer-1\"}");
      assertThat(signer.verify(bound, TRAINER)).isEqualTo(ticket);
      assertThat(signer.verify(unbound, TRAINER)).isEqualTo(ticket);
      assertThat(signer.verify(unbound)).isEqualTo(ticket);
    }
  }

  /**
   * A node refuses what its codec does not know rather than serve a ticket with something left
   * unread: a field of no ticket type, a ticket without its {@code kind}, a kind of another type.
   */
  @Test
  void unknownFieldsAndKindsAreRefused() {
    TicketSigner signer = signer(NOW);
    ObjectNode extra = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    extra.put("rows_max", 1);
    assertRefused(signer, extra, "unknown field 'rows_max' in a slice ticket");
    ObjectNode kindless = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    kindless.remove("kind");
    assertRefused(signer, kindless, "unknown kind (none)");
    ObjectNode other = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    other.put("kind", "job");
    assertRefused(signer, other, "unknown field 'slice' in a job ticket");
    ObjectNode unknown = Json.parseObject(signer.sign(SHARD).getBytes(), "ticket");
    unknown.put("kind", "shard");
    assertRefused(signer, unknown, "unknown kind 'shard' (known: slice, job)");
  }

  /** A client reads what a slice ticket serves without the secret, and no job ticket as one. */
  @Test
  void aClientReadsASliceTicketsRowsAndNothingElseAsOne() {
    TicketSigner signer = signer(NOW);
    assertThat(FloeTicket.parse(signer.sign(SHARD, TRAINER))).isEqualTo(SHARD);
    assertThatThrownBy(() -> FloeTicket.parse(signer.sign(JOB)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a 'job' ticket, not a slice ticket");
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

  private static String hmac(byte[] bytes) throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(SECRET, "HmacSHA256"));
    return java.util.HexFormat.of().formatHex(mac.doFinal(bytes));
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
   * Every field of either kind, down to each order setting of a job's read, is written by its codec
   * and read back: another value gives other bytes, and those bytes put in place of a signed
   * ticket's own (its expiry and signature kept) are refused.
   */
  @Test
  void theSignatureCoversEveryFieldOfBothKinds() throws Exception {
    for (SignedTicket ticket : List.of(SHARD, JOB)) {
      for (java.lang.reflect.RecordComponent field : ticket.getClass().getRecordComponents()) {
        assertCovered(
            ticket, (SignedTicket) withChanged((Record) ticket, field.getName()), field.getName());
      }
    }
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
    ObjectNode written = TicketCodec.encodeAny(changed);
    assertThat(Json.string(written))
        .as("the bytes of a %s with another %s", ticket.getClass().getSimpleName(), field)
        .isNotEqualTo(Json.string(TicketCodec.encodeAny(ticket)));
    assertThat(TicketCodec.decodeAny(written.deepCopy()))
        .as("%s read back", field)
        .isEqualTo(changed);
    TicketSigner signer = signer(NOW);
    ObjectNode spliced = Json.parseObject(signer.sign(ticket).getBytes(), "ticket");
    spliced.removeAll();
    spliced.setAll(written);
    ObjectNode sent = Json.parseObject(signer.sign(ticket).getBytes(), "ticket");
    spliced.set("expires", sent.get("expires"));
    spliced.set("sig", sent.get("sig"));
    assertRefused(signer, spliced, "signature does not match");
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
