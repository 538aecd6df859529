package io.floe.gateway.job;

import io.floe.spec.DatasetLayout;
import io.floe.util.Excerpt;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/** A dataset's Arrow schema, and the part of it a job reads. */
final class JobSchemas {
  private JobSchemas() {}

  static Schema of(DatasetLayout layout) {
    try {
      return Schema.fromJSON(layout.arrowSchemaJson());
    } catch (IOException e) {
      throw new IllegalStateException("Unreadable schema of dataset " + layout.name(), e);
    }
  }

  /**
   * The job's columns of the dataset, in the job's order; all columns when it names none.
   *
   * @throws IllegalArgumentException naming a column the dataset does not serve
   */
  static Schema project(Schema schema, List<String> columns, String dataset) {
    if (columns.isEmpty()) {
      return schema;
    }
    List<Field> fields = new ArrayList<>();
    for (String column : columns) {
      try {
        fields.add(schema.findField(column));
      } catch (IllegalArgumentException e) {
        List<String> known = new ArrayList<>();
        schema.getFields().forEach(field -> known.add(field.getName()));
        throw new io.floe.protocol.InvalidRequestException(
            String.format(
                "Unknown column '%s': dataset '%s' serves %s", Excerpt.of(column), dataset, known));
      }
    }
    return new Schema(fields, schema.getCustomMetadata());
  }
}
