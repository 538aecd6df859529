package io.floe.store;

import org.apache.arrow.memory.BufferAllocator;

/** Describes an allocator and its children with the bytes each holds, for logs and leak reports. */
public final class AllocatorTree {
  private AllocatorTree() {}

  public static String describe(BufferAllocator allocator) {
    StringBuilder out = new StringBuilder();
    describe(allocator, 0, out);
    return out.toString();
  }

  private static void describe(BufferAllocator allocator, int depth, StringBuilder out) {
    out.append("  ".repeat(depth))
        .append(allocator.getName())
        .append(": ")
        .append(allocator.getAllocatedMemory())
        .append(" bytes\n");
    for (BufferAllocator child : allocator.getChildAllocators()) {
      describe(child, depth + 1, out);
    }
  }
}
