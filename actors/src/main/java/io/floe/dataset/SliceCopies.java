package io.floe.dataset;

import java.util.ArrayList;
import java.util.List;

/**
 * The entity ids of a slice's copies. The first copy's entity id is the slice id itself, so a
 * dataset of one replica (every dataset before replicas existed) has the entities it always had;
 * copy {@code k > 0} is {@code sliceId~k}. Every copy loads the same rows under the slice id, so a
 * ticket naming the slice is served by any node holding a copy.
 */
public final class SliceCopies {
  private static final char MARK = '~';

  private SliceCopies() {}

  /** The entity id of copy {@code copy} (0-based) of {@code sliceId}. */
  public static String entityId(String sliceId, int copy) {
    return copy == 0 ? sliceId : sliceId + MARK + copy;
  }

  /** The entity ids of every copy of {@code sliceId}, the first copy first. */
  public static List<String> entityIds(String sliceId, int replicas) {
    List<String> ids = new ArrayList<>(replicas);
    for (int copy = 0; copy < replicas; copy++) {
      ids.add(entityId(sliceId, copy));
    }
    return ids;
  }

  /** The slice an entity id holds a copy of. */
  public static String sliceOf(String entityId) {
    int mark = entityId.lastIndexOf(MARK);
    return mark < 0 ? entityId : entityId.substring(0, mark);
  }

  /** Which copy an entity id is: 0 for the slice id itself. */
  public static int copyOf(String entityId) {
    int mark = entityId.lastIndexOf(MARK);
    return mark < 0 ? 0 : Integer.parseInt(entityId.substring(mark + 1));
  }
}
