package io.floe.gateway;

import org.apache.arrow.flight.Location;

/** Where readers fetch a slice: the Flight location of the node holding it. */
public final class SliceHolders {
  private SliceHolders() {}

  /**
   * The node holding a slice. A holder that is not a Flight location is a node's mistake (it loaded
   * the slice before its server was bound): the plan fails rather than send readers to a node that
   * does not hold the slice.
   */
  public static Location location(String sliceId, String holder) {
    try {
      return new Location(holder);
    } catch (java.net.URISyntaxException | RuntimeException e) {
      throw new IllegalStateException(
          "Slice " + sliceId + " has no usable holder location: '" + holder + "'", e);
    }
  }
}
