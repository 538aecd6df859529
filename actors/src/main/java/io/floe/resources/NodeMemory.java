package io.floe.resources;

import io.floe.serialization.CborSerializable;

/**
 * A data node's Arrow memory as it last told the cluster: what its slices and streams hold and what
 * it may hold ({@code floe.memory.limit}).
 */
public record NodeMemory(long allocated, long limit) implements CborSerializable {
  public long free() {
    return Math.max(0, limit - allocated);
  }
}
