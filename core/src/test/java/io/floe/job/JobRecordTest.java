package io.floe.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobRecordTest {
  private static final JobSpec SPEC =
      new JobSpec(
          "j",
          "d",
          1,
          true,
          JobMode.DYNAMIC,
          List.of(),
          10,
          TailPolicy.DROP,
          64,
          4,
          1,
          1_000,
          false);
  private static final PinnedLayout LAYOUT = new PinnedLayout(7, "abc", 1_000);

  private static long[] bits(int... set) {
    BitSet bits = new BitSet();
    for (int i : set) {
      bits.set(i);
    }
    return bits.toLongArray();
  }

  @Test
  void mergingNeverTakesAnAcknowledgementBack() {
    JobRecord stale =
        new JobRecord(SPEC, LAYOUT, List.of(new JobRecord.EpochAcks(0, bits(1, 2), List.of())));
    JobRecord stored =
        new JobRecord(
            SPEC,
            LAYOUT,
            List.of(
                new JobRecord.EpochAcks(0, bits(1, 5, 70), List.of()),
                new JobRecord.EpochAcks(1, bits(3), List.of())));
    JobRecord merged = stale.mergedWith(stored);
    assertThat(merged.epochs()).hasSize(2);
    assertThat(BitSet.valueOf(merged.epochs().get(0).acknowledged()))
        .isEqualTo(BitSet.valueOf(bits(1, 2, 5, 70)));
    assertThat(BitSet.valueOf(merged.epochs().get(1).acknowledged()))
        .isEqualTo(BitSet.valueOf(bits(3)));
  }

  @Test
  void mergingKeepsTheLatestAcknowledgementsOfBoth() {
    List<String> many = new java.util.ArrayList<>();
    for (int k = 0; k < EpochLeases.RECENT_ACKS; k++) {
      many.add("0:" + k + ":1");
    }
    JobRecord mine =
        new JobRecord(SPEC, LAYOUT, List.of(new JobRecord.EpochAcks(0, bits(1), many)));
    JobRecord theirs =
        new JobRecord(
            SPEC, LAYOUT, List.of(new JobRecord.EpochAcks(0, bits(99), List.of("0:99:2"))));
    List<String> recent = mine.mergedWith(theirs).epochs().get(0).recentAcks();
    assertThat(recent).hasSize(EpochLeases.RECENT_ACKS).contains("0:99:2").doesNotContain("0:0:1");
  }

  @Test
  void aRecordOfOtherSettingsIsReplacedNotMerged() {
    JobRecord fresh = new JobRecord(SPEC, LAYOUT, List.of());
    JobRecord old =
        new JobRecord(
            SPEC,
            new PinnedLayout(8, "def", 1_000),
            List.of(new JobRecord.EpochAcks(0, bits(1), List.of())));
    assertThat(fresh.mergedWith(old)).isSameAs(fresh);
    assertThat(fresh.mergedWith(null)).isSameAs(fresh);
  }

  @Test
  void mergingKeepsTheNewestEpochs() {
    List<JobRecord.EpochAcks> many = new java.util.ArrayList<>();
    for (long e = 0; e < JobRecord.EPOCHS_KEPT + 3; e++) {
      many.add(new JobRecord.EpochAcks(e, bits(0), List.of()));
    }
    JobRecord merged =
        new JobRecord(SPEC, LAYOUT, many).mergedWith(new JobRecord(SPEC, LAYOUT, List.of()));
    assertThat(merged.epochs()).hasSize(JobRecord.EPOCHS_KEPT);
    assertThat(merged.epochs().get(0).epoch()).isEqualTo(3);
  }
}
