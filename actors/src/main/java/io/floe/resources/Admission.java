package io.floe.resources;

import io.floe.iceberg.MemoryNeed;

/** How the admission of a load into the data nodes' memory was decided. */
public sealed interface Admission {
  /**
   * Admitted: {@code need} is reserved until the load is released. It may have fewer slices
   * decoding at once than asked for: as many as fit, at least one; the load dispatches no more.
   */
  record Admitted(MemoryNeed need) implements Admission {}

  /** Waiting for loads in flight; the decision comes later. */
  record Queued(String reason) implements Admission {}

  /** Refused, and why: what it needs and what is free, in bytes and as people read them. */
  record Refused(String reason) implements Admission {}
}
