package io.floe.auth;

import java.util.Locale;

/**
 * What a caller may do. An operator manages datasets (load, refresh, drop) and may do all a reader
 * may; a reader plans and reads datasets, runs training jobs (register, status, drop, lease, ack)
 * and sees status, list and cluster.
 */
public enum Role {
  READER,
  OPERATOR;

  /** Whether this role may do what {@code needed} may. */
  public boolean allows(Role needed) {
    return this == OPERATOR || needed == READER;
  }

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** A role by its name in settings and token files ({@code reader}, {@code operator}). */
  public static Role parse(String name) {
    for (Role role : values()) {
      if (role.wireName().equals(name.trim().toLowerCase(Locale.ROOT))) {
        return role;
      }
    }
    throw new IllegalArgumentException(
        "Unknown role '" + name + "': expected 'reader' or 'operator'");
  }
}
