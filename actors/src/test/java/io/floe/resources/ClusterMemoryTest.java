package io.floe.resources;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.iceberg.MemoryNeed;
import io.floe.testkit.OneNodeCluster;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Loads are admitted into the data nodes' free memory less what loads in flight reserved: one that
 * does not fit waits for those in flight and is then admitted or refused on the figures they left,
 * and every refusal says what the load needs and what is free, in bytes. In a cluster that
 * serializes every message as between nodes (the sharing actor's own timer messages once failed
 * that, so nothing was ever shared there).
 */
class ClusterMemoryTest {
  private static final long KIB = 1024;

  private ActorTestKit kit;
  private BufferAllocator root;

  @BeforeEach
  void startDataNode() {
    kit = OneNodeCluster.start("cluster-memory-test", "pekko.cluster.roles = [data]");
    root = new RootAllocator(1024 * KIB);
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
    root.close(); // fails if a buffer a test took was not returned
  }

  private ClusterMemory memory(int queueLength, Duration waitTimeout) {
    ClusterMemory memory = new ClusterMemory(root, 2, queueLength, waitTimeout);
    memory.start(kit.system());
    return memory;
  }

  /** A load needing {@code kib} KiB held, nothing while loading. */
  private static MemoryNeed needing(long kib) {
    return new MemoryNeed(kib * KIB, 1_000, 1, 1, 0, 0);
  }

  @Test
  void aLoadLargerThanTheFreeMemoryIsRefusedWithTheLeastItNeedsAndWhatIsFree() {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));

    ClusterMemory.Admission big =
        memory.admit(
            "big",
            1,
            new MemoryNeed(900 * KIB, 1_000_000, 2, 1, 64 * KIB, 16 * KIB),
            decided -> {});

    // 900 KiB held once loaded, and with one slice decoding at a time 3 times 64 KiB and a batch
    // of 16 KiB: 1,108 KiB, more than the node's 1,024.
    assertThat(big)
        .isInstanceOfSatisfying(
            ClusterMemory.Admission.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("Dataset 'big' needs at least 1.1 MiB (1,134,592 bytes)")
                    .contains("900.0 KiB held once loaded (1,000,000 rows")
                    .contains(
                        "208.0 KiB while 1 slice decodes (each 3 times a slice of about 64.0 KiB"
                            + " and a batch of 16.0 KiB)")
                    .contains("1.0 MiB (1,048,576 bytes) free of its 1.0 MiB memory limit"));
    assertThat(memory.admit("small", 1, needing(512), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    memory.release("small", 1);
    assertThat(memory.reservedBytes()).isZero();
  }

  @Test
  void aLoadThatFitsOnlyWithFewerSlicesDecodingAtOnceIsAdmittedWithAsManyAsFit() {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));
    // 400 KiB held, 192 KiB per slice decoding: 4 at once need 1,168 KiB, 3 need 976.
    MemoryNeed need = new MemoryNeed(400 * KIB, 1_000, 4, 1, 64 * KIB, 0);

    assertThat(memory.admit("wide", 1, need, decided -> {}))
        .isInstanceOfSatisfying(
            ClusterMemory.Admission.Admitted.class,
            admitted -> assertThat(admitted.need().slicesAtOnce()).isEqualTo(3));
    assertThat(memory.reservedBytes()).isEqualTo(976 * KIB);
    memory.release("wide", 1);
  }

  @Test
  void everyCopyOfASliceIsHeldAndDecodedAgain() {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));
    // One copy: 300 KiB held and 192 KiB decoding; two copies: 600 and 384, 984 KiB in all.
    MemoryNeed once = new MemoryNeed(300 * KIB, 1_000, 1, 1, 64 * KIB, 0);
    assertThat(once.times(2).total()).isEqualTo(984 * KIB);

    try (ArrowBuf elsewhere = root.buffer(256 * KIB)) {
      assertThat(memory.admit("twice", 1, once.times(2), decided -> {}))
          .isInstanceOfSatisfying(
              ClusterMemory.Admission.Refused.class,
              refused ->
                  assertThat(refused.reason()).contains("1 slice decodes, 2 copies of each"));
      assertThat(memory.admit("once", 1, once, decided -> {}))
          .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    }
    memory.release("once", 1);
  }

  @Test
  void loadsInFlightReserveWhatTheyNeedAndTheNextWaitsForThemThenIsDecidedOnWhatTheyLeft()
      throws Exception {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));
    CompletableFuture<ClusterMemory.Admission> second = new CompletableFuture<>();
    CompletableFuture<ClusterMemory.Admission> third = new CompletableFuture<>();

    assertThat(memory.admit("first", 1, needing(600), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    // Each fits the free memory alone, not beside the first's reservation: they wait.
    assertThat(memory.admit("second", 1, needing(500), second::complete))
        .isInstanceOfSatisfying(
            ClusterMemory.Admission.Queued.class,
            queued -> assertThat(queued.reason()).contains("1 load in flight reserved 600.0 KiB"));
    assertThat(memory.admit("third", 1, needing(520), third::complete))
        .isInstanceOf(ClusterMemory.Admission.Queued.class);

    // The first ends holding 256 KiB: the second fits in the 768 KiB left and goes; the third
    // does not fit beside the second's reservation and waits on.
    try (ArrowBuf firstHolds = root.buffer(256 * KIB)) {
      memory.release("first", 1);
      assertThat(second.getNow(null)).isInstanceOf(ClusterMemory.Admission.Admitted.class);
      assertThat(third).isNotDone();

      // The second ends holding 256 KiB: 512 KiB are free, the third needs 520 and nothing is in
      // flight any more, so it is refused with both figures.
      try (ArrowBuf secondHolds = root.buffer(256 * KIB)) {
        memory.release("second", 1);
        assertThat(third.getNow(null))
            .isInstanceOfSatisfying(
                ClusterMemory.Admission.Refused.class,
                refused ->
                    assertThat(refused.reason())
                        .contains("Dataset 'third' needs at least 520.0 KiB (532,480 bytes)")
                        .contains("512.0 KiB (524,288 bytes) free"));
      }
    }
    assertThat(memory.reservedBytes()).isZero();
  }

  @Test
  void aLoadThatCouldNotFitEvenIfTheLoadsInFlightGaveEverythingBackIsRefusedAtOnce() {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));
    assertThat(memory.admit("first", 1, needing(300), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    try (ArrowBuf elsewhere = root.buffer(512 * KIB)) {
      // 512 KiB free and 300 reserved: at most 812 KiB could be free for it.
      assertThat(memory.admit("large", 1, needing(900), decided -> {}))
          .isInstanceOf(ClusterMemory.Admission.Refused.class);
    }
    // More than the node's limit: refused however much the load in flight reserved.
    assertThat(memory.admit("huge", 1, needing(1100), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Refused.class);
    memory.release("first", 1);
  }

  @Test
  void theQueueIsBoundedInLengthAndInTime() {
    ClusterMemory memory = memory(1, Duration.ofMillis(200));
    CompletableFuture<ClusterMemory.Admission> waiting = new CompletableFuture<>();
    assertThat(memory.admit("first", 1, needing(600), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    assertThat(memory.admit("second", 1, needing(600), waiting::complete))
        .isInstanceOf(ClusterMemory.Admission.Queued.class);
    assertThat(memory.admit("third", 1, needing(600), decided -> {}))
        .isInstanceOfSatisfying(
            ClusterMemory.Admission.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("1 loads already wait for memory")
                    .contains("queue-length"));

    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(waiting.getNow(null))
                    .isInstanceOfSatisfying(
                        ClusterMemory.Admission.Refused.class,
                        refused ->
                            assertThat(refused.reason())
                                .contains("it waited 200ms")
                                .contains("wait-timeout")));
    memory.release("first", 1);
    assertThat(memory.reservedBytes()).isZero();
  }

  @Test
  void aDroppedLoadStopsWaiting() {
    ClusterMemory memory = memory(4, Duration.ofMinutes(1));
    CompletableFuture<ClusterMemory.Admission> dropped = new CompletableFuture<>();
    memory.admit("first", 1, needing(600), decided -> {});
    assertThat(memory.admit("second", 7, needing(600), dropped::complete))
        .isInstanceOf(ClusterMemory.Admission.Queued.class);

    memory.release("second", 7);
    memory.release("first", 1);

    assertThat(dropped).isNotDone();
    assertThat(memory.admit("third", 1, needing(600), decided -> {}))
        .isInstanceOf(ClusterMemory.Admission.Admitted.class);
    memory.release("third", 1);
  }
}
