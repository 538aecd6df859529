package io.floe.store;

import org.apache.arrow.memory.OutOfMemoryException;

/**
 * A load refused before it starts: the cluster's data nodes have less free Arrow memory than the
 * least the dataset takes. A kind of running out of memory (RESOURCE_EXHAUSTED), found from the
 * plan rather than from a failed allocation half-way through the load.
 */
public final class MemoryAdmissionException extends OutOfMemoryException {
  public MemoryAdmissionException(String message) {
    super(message);
  }
}
