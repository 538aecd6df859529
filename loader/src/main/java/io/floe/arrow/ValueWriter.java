package io.floe.arrow;

/** Writes one Iceberg generic value (or null) into a fixed position of an Arrow vector. */
@FunctionalInterface
interface ValueWriter {
  void write(int index, Object value);
}
