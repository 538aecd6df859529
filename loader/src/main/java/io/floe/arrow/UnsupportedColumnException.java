package io.floe.arrow;

import io.floe.spec.InvalidSpecException;

/** A column whose Iceberg type Floe cannot hold in Arrow; the message names the column and type. */
public final class UnsupportedColumnException extends InvalidSpecException {
  public UnsupportedColumnException(String columnPath, String typeName) {
    super(
        String.format(
            "Column '%s' has Iceberg type %s, which Floe cannot serve as Arrow; "
                + "leave it out of 'columns'",
            columnPath, typeName));
  }
}
