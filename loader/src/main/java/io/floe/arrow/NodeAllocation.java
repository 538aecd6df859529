package io.floe.arrow;

import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.netty.NettyAllocationManager;
import org.apache.arrow.memory.rounding.DefaultRoundingPolicy;
import org.apache.arrow.memory.rounding.RoundingPolicy;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * How a node takes Arrow memory. Arrow's defaults round every request below 16 MiB up to a power of
 * two and count the rounded size, so a slice packed into 9 MiB counted (and pooled) 16 MiB: at some
 * slice sizes the node held nearly twice its data. Here requests of {@link #LARGE} (64 KiB) and
 * more are rounded to a page and taken straight from the operating system, so a slice holds and
 * counts its bytes and a page; smaller ones (stream buffers, vectors being built) keep Netty's
 * pooled allocator and its power-of-two rounding, which suit them.
 */
public final class NodeAllocation {
  /**
   * From this size on, memory is allocated exactly (rounded to a page) and not pooled: a slice of
   * 240 KiB (2,000 slices of a 470 MiB table) holds 244 KiB, not 256 KiB.
   */
  public static final long LARGE = 64L << 10;

  private static final long PAGE = 4096;

  private NodeAllocation() {}

  /** A root allocator that holds at most {@code limit} bytes, allocating as described above. */
  public static RootAllocator root(long limit) {
    return new RootAllocator(
        RootAllocator.configBuilder()
            .maxAllocation(limit)
            .roundingPolicy(ROUNDING)
            .allocationManagerFactory(FACTORY)
            .build());
  }

  static final RoundingPolicy ROUNDING =
      size ->
          size < LARGE
              ? DefaultRoundingPolicy.DEFAULT_ROUNDING_POLICY.getRoundedSize(size)
              : (size + PAGE - 1) / PAGE * PAGE;

  static final AllocationManager.Factory FACTORY =
      new AllocationManager.Factory() {
        @Override
        public AllocationManager create(BufferAllocator owner, long size) {
          return size < LARGE
              ? NettyAllocationManager.FACTORY.create(owner, size)
              : new Exact(owner, size);
        }

        @Override
        public ArrowBuf empty() {
          return NettyAllocationManager.FACTORY.empty();
        }
      };

  /** Memory from the operating system, exactly the size asked for, freed when released. */
  private static final class Exact extends AllocationManager {
    private final long address;
    private final long size;

    Exact(BufferAllocator owner, long size) {
      super(owner);
      this.address = MemoryUtil.allocateMemory(size);
      this.size = size;
    }

    @Override
    public long getSize() {
      return size;
    }

    @Override
    protected long memoryAddress() {
      return address;
    }

    @Override
    protected void release0() {
      MemoryUtil.freeMemory(address);
    }
  }
}
