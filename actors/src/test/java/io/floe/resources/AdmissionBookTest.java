package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.iceberg.MemoryNeed;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Loads are admitted into the data nodes' free memory less what loads in flight reserved: one that
 * does not fit waits for those in flight and is then admitted or refused on the figures they left,
 * and every refusal says what the load needs and what is free, in bytes. The book decides on the
 * figures it is given; {@link AdmissionDeskTest} shows the desk reads them for each decision.
 */
class AdmissionBookTest {
  private static final long KIB = 1024;
  private static final String NODE = "pekko://floe@127.0.0.1:2551";

  /** One data node with a 1 MiB limit and {@code allocatedKib} KiB held. */
  private static MemoryFigures holding(long allocatedKib) {
    return new MemoryFigures(Map.of(NODE, new NodeMemory(allocatedKib * KIB, 1024 * KIB)));
  }

  private static final MemoryFigures EMPTY = holding(0);

  /** A load needing {@code kib} KiB held, nothing while loading. */
  private static MemoryNeed needing(long kib) {
    return new MemoryNeed(kib * KIB, 1_000, 1, 1, 0, 0);
  }

  private static AdmissionBook book(int queueLength, Duration waitTimeout) {
    return new AdmissionBook(queueLength, waitTimeout);
  }

  @Test
  void aLoadLargerThanTheFreeMemoryIsRefusedWithTheLeastItNeedsAndWhatIsFree() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));

    Admission big =
        book.admit(
            "big/1", "big", new MemoryNeed(900 * KIB, 1_000_000, 2, 1, 64 * KIB, 16 * KIB), EMPTY);

    // 900 KiB held once loaded, and with one slice decoding at a time 3 times 64 KiB and a batch
    // of 16 KiB: 1,108 KiB, more than the node's 1,024.
    assertThat(big)
        .isInstanceOfSatisfying(
            Admission.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("Dataset 'big' needs at least 1.1 MiB (1,134,592 bytes)")
                    .contains("900.0 KiB held once loaded (1,000,000 rows")
                    .contains(
                        "208.0 KiB while 1 slice decodes (each 3 times a slice of about 64.0 KiB"
                            + " and a batch of 16.0 KiB)")
                    .contains(
                        NODE + " 1.0 MiB (1,048,576 bytes) free of its 1.0 MiB memory limit"));
    assertThat(book.decided("big/1")).isNull();
    assertThat(book.admit("small/1", "small", needing(512), EMPTY))
        .isInstanceOf(Admission.Admitted.class);
    book.release("small/1", EMPTY);
    assertThat(book.reservedBytes()).isZero();
  }

  @Test
  void aLoadThatFitsOnlyWithFewerSlicesDecodingAtOnceIsAdmittedWithAsManyAsFit() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));
    // 400 KiB held, 192 KiB per slice decoding: 4 at once need 1,168 KiB, 3 need 976.
    MemoryNeed need = new MemoryNeed(400 * KIB, 1_000, 4, 1, 64 * KIB, 0);

    assertThat(book.admit("wide/1", "wide", need, EMPTY))
        .isInstanceOfSatisfying(
            Admission.Admitted.class,
            admitted -> assertThat(admitted.need().slicesAtOnce()).isEqualTo(3));
    assertThat(book.reservedBytes()).isEqualTo(976 * KIB);
  }

  @Test
  void everyCopyOfASliceIsHeldAndDecodedAgain() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));
    // One copy: 300 KiB held and 192 KiB decoding; two copies: 600 and 384, 984 KiB in all.
    MemoryNeed once = new MemoryNeed(300 * KIB, 1_000, 1, 1, 64 * KIB, 0);
    assertThat(once.times(2).total()).isEqualTo(984 * KIB);

    MemoryFigures elsewhere = holding(256);
    assertThat(book.admit("twice/1", "twice", once.times(2), elsewhere))
        .isInstanceOfSatisfying(
            Admission.Refused.class,
            refused -> assertThat(refused.reason()).contains("1 slice decodes, 2 copies of each"));
    assertThat(book.admit("once/1", "once", once, elsewhere))
        .isInstanceOf(Admission.Admitted.class);
  }

  @Test
  void loadsInFlightReserveWhatTheyNeedAndTheNextWaitsForThemThenIsDecidedOnWhatTheyLeft() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));

    assertThat(book.admit("first/1", "first", needing(600), EMPTY))
        .isInstanceOf(Admission.Admitted.class);
    // Each fits the free memory alone, not beside the first's reservation: they wait.
    assertThat(book.admit("second/1", "second", needing(500), EMPTY))
        .isInstanceOfSatisfying(
            Admission.Queued.class,
            queued -> assertThat(queued.reason()).contains("1 load in flight reserved 600.0 KiB"));
    assertThat(book.admit("third/1", "third", needing(520), EMPTY))
        .isInstanceOf(Admission.Queued.class);
    // Asked again, a load hears what was decided and reserves nothing more.
    assertThat(book.decided("first/1")).isInstanceOf(Admission.Admitted.class);
    assertThat(book.decided("second/1")).isInstanceOf(Admission.Queued.class);

    // The first ends holding 256 KiB: the second fits in the 768 KiB left and goes; the third
    // does not fit beside the second's reservation and waits on.
    Map<String, Admission> afterFirst = book.release("first/1", holding(256));
    assertThat(afterFirst).containsOnlyKeys("second/1");
    assertThat(afterFirst.get("second/1")).isInstanceOf(Admission.Admitted.class);

    // The second ends holding 256 KiB: 512 KiB are free, the third needs 520 and nothing is in
    // flight any more, so it is refused with both figures.
    Map<String, Admission> afterSecond = book.release("second/1", holding(512));
    assertThat(afterSecond.get("third/1"))
        .isInstanceOfSatisfying(
            Admission.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("Dataset 'third' needs at least 520.0 KiB (532,480 bytes)")
                    .contains("512.0 KiB (524,288 bytes) free"));
    assertThat(book.reservedBytes()).isZero();
    assertThat(book.waiting()).isFalse();
  }

  @Test
  void aLoadThatCouldNotFitEvenIfTheLoadsInFlightGaveEverythingBackIsRefusedAtOnce() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));
    assertThat(book.admit("first/1", "first", needing(300), EMPTY))
        .isInstanceOf(Admission.Admitted.class);
    // 512 KiB free and 300 reserved: at most 812 KiB could be free for it.
    assertThat(book.admit("large/1", "large", needing(900), holding(512)))
        .isInstanceOf(Admission.Refused.class);
    // More than the node's limit: refused however much the load in flight reserved.
    assertThat(book.admit("huge/1", "huge", needing(1100), EMPTY))
        .isInstanceOf(Admission.Refused.class);
  }

  @Test
  void theQueueIsBoundedInLengthAndInTime() {
    AdmissionBook book = book(1, Duration.ofMillis(200));
    assertThat(book.admit("first/1", "first", needing(600), EMPTY))
        .isInstanceOf(Admission.Admitted.class);
    assertThat(book.admit("second/1", "second", needing(600), EMPTY))
        .isInstanceOf(Admission.Queued.class);
    assertThat(book.admit("third/1", "third", needing(600), EMPTY))
        .isInstanceOfSatisfying(
            Admission.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("1 loads already wait for memory")
                    .contains("queue-length"));

    assertThat(book.waitedTooLong("second/1", EMPTY))
        .satisfies(
            refused ->
                assertThat(refused.reason()).contains("it waited 200ms").contains("wait-timeout"));
    assertThat(book.waitedTooLong("second/1", EMPTY)).isNull();
    assertThat(book.waiting()).isFalse();
  }

  @Test
  void aDroppedLoadStopsWaiting() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));
    book.admit("first/1", "first", needing(600), EMPTY);
    assertThat(book.admit("second/7", "second", needing(600), EMPTY))
        .isInstanceOf(Admission.Queued.class);

    assertThat(book.release("second/7", EMPTY)).isEmpty();
    assertThat(book.release("first/1", EMPTY)).isEmpty();

    assertThat(book.admit("third/1", "third", needing(600), EMPTY))
        .isInstanceOf(Admission.Admitted.class);
  }

  @Test
  void aRecheckAdmitsAWaitingLoadThatFitsNowAndRefusesNone() {
    AdmissionBook book = book(4, Duration.ofMinutes(1));
    book.admit("first/1", "first", needing(200), holding(300));
    assertThat(book.admit("second/1", "second", needing(600), holding(300)))
        .isInstanceOf(Admission.Queued.class);
    assertThat(book.admit("third/1", "third", needing(900), holding(300)))
        .isInstanceOf(Admission.Queued.class);

    // A dataset dropped elsewhere freed 300 KiB; no reservation ended.
    Map<String, Admission> rechecked = book.recheck(EMPTY);

    assertThat(rechecked).containsOnlyKeys("second/1");
    assertThat(rechecked.get("second/1")).isInstanceOf(Admission.Admitted.class);
    assertThat(book.decided("third/1")).isInstanceOf(Admission.Queued.class);
  }
}
