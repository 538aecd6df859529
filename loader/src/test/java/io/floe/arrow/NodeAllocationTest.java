package io.floe.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.junit.jupiter.api.Test;

/**
 * A node counts what a large buffer really holds (its size rounded to a page), not the next power
 * of two, so a slice of 9 MiB no longer counts 16 MiB against the memory limit.
 */
class NodeAllocationTest {
  @Test
  void largeBuffersCountTheirSizeSmallOnesKeepPooledRounding() {
    try (BufferAllocator root = NodeAllocation.root(64L << 20);
        BufferAllocator slice = root.newChildAllocator("slice", 0, Long.MAX_VALUE)) {
      long nine = 9L << 20;
      try (ArrowBuf large = slice.buffer(nine + 123)) {
        assertThat(slice.getAllocatedMemory()).isBetween(nine + 123, nine + 123 + 4096);
        large.setLong(nine, 42L);
        assertThat(large.getLong(nine)).isEqualTo(42L);
      }
      try (ArrowBuf small = slice.buffer(3000)) {
        assertThat(slice.getAllocatedMemory()).isEqualTo(4096);
        small.setInt(0, 7);
      }
      // A small slice's packed buffer: its size and a page, not the next power of two.
      try (ArrowBuf packed = slice.buffer(240_000)) {
        assertThat(slice.getAllocatedMemory()).isBetween(240_000L, 240_000L + 4096);
      }
      assertThat(root.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void theLimitHoldsForExactAllocations() {
    try (BufferAllocator root = NodeAllocation.root(10L << 20)) {
      ArrowBuf first = root.buffer(6L << 20);
      assertThatThrownBy(() -> root.buffer(6L << 20)).isInstanceOf(OutOfMemoryException.class);
      first.close();
      root.buffer(6L << 20).close();
      assertThat(root.getAllocatedMemory()).isZero();
    }
  }
}
