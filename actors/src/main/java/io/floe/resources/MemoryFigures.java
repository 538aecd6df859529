package io.floe.resources;

import java.util.Map;

/** The up data nodes' Arrow memory as known when a load is decided, by node address. */
record MemoryFigures(Map<String, NodeMemory> nodes) {
  MemoryFigures {
    nodes = Map.copyOf(nodes);
  }

  long free() {
    return nodes.values().stream().mapToLong(NodeMemory::free).sum();
  }

  long limit() {
    return nodes.values().stream().mapToLong(NodeMemory::limit).sum();
  }

  boolean known() {
    return !nodes.isEmpty();
  }
}
