package io.floe.resources;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The Flight location this node tells readers to fetch its slices from; known once the Flight
 * server is bound (its port may be chosen then), before any entity starts.
 */
public final class AdvertisedLocation {
  private final AtomicReference<String> location = new AtomicReference<>();

  public String get() {
    String known = location.get();
    if (known == null) {
      throw new IllegalStateException("The node's Flight location is not known yet");
    }
    return known;
  }

  public void set(String uri) {
    location.set(uri);
  }
}
