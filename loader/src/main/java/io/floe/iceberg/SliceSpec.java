package io.floe.iceberg;

import io.floe.serialization.CborSerializable;
import io.floe.spec.TableSource;
import java.util.List;

/**
 * Everything a node needs to load one slice on its own, with no access to the planner: the Iceberg
 * scan tasks (each one Parquet row group or a run of them, with their delete files and residual
 * filter, as Iceberg's JSON task form), the schema to serve and the batch size.
 *
 * @param sliceId the sharded entity id: {@code dataset/generation/content}, where content is a
 *     digest of what the slice holds, so one slice keeps its id across snapshots of a dataset
 * @param source the table the tasks' files belong to, which decides the FileIO that reads them
 * @param requestedSchemaJson the served columns, as Iceberg schema JSON
 * @param filterJson the full row filter as Iceberg expression JSON (re-checked per row)
 * @param nameMappingJson the table's name mapping for files without field ids, or null
 * @param taskJsons the scan tasks in order
 */
public record SliceSpec(
    String sliceId,
    TableSource source,
    String requestedSchemaJson,
    String filterJson,
    String nameMappingJson,
    List<String> taskJsons,
    int batchRows,
    long estimatedBytes)
    implements CborSerializable {
  public SliceSpec {
    taskJsons = List.copyOf(taskJsons);
  }

  public static String sliceId(String dataset, long generation, String content) {
    return dataset + "/" + generation + "/" + content;
  }
}
