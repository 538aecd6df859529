package io.floe.testing;

import org.apache.iceberg.data.Record;

/**
 * Makes the row whose {@code id} column is {@code id}.
 *
 * <p>Implementations must be pure functions of {@code id} (and whatever seed they captured), so a
 * test can rebuild the expected row for any id without keeping the written data around.
 */
@FunctionalInterface
public interface RowGenerator {
  Record row(long id);
}
