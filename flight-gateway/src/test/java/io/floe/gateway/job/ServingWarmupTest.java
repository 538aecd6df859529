package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** The warm-up gives back every byte it took, whether it runs to its end or is stopped early. */
class ServingWarmupTest {
  @Test
  void aWarmupThatRunsToItsEndLeavesNothingAllocated() {
    try (BufferAllocator root = new RootAllocator()) {
      ServingWarmup warmup = ServingWarmup.start(root, Duration.ofSeconds(60));
      assertThat(warmup.awaitEnd(Duration.ofSeconds(60))).isTrue();
      assertThat(root.getAllocatedMemory()).isZero();
      assertThat(root.getChildAllocators()).isEmpty();
    }
  }

  @Test
  void aWarmupStoppedAtOnceLeavesNothingAllocated() {
    try (BufferAllocator root = new RootAllocator()) {
      ServingWarmup.start(root, Duration.ofMillis(1)).stop();
      ServingWarmup early = ServingWarmup.start(root, Duration.ofSeconds(30));
      early.stop();
      assertThat(root.getAllocatedMemory()).isZero();
      assertThat(root.getChildAllocators()).isEmpty();
    }
  }
}
