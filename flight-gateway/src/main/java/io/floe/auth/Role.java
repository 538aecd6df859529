package io.floe.auth;

import java.util.Locale;

/**
 * What a caller may do. A reader plans and reads datasets, runs training jobs (register, status,
 * drop its own, lease, ack) and sees status, list and cluster; an operator also manages datasets
 * (load, refresh, drop) its tenant owns; an admin may do all an operator may, to datasets and jobs
 * of every tenant.
 */
public enum Role {
  READER,
  OPERATOR,
  ADMIN;

  /** Whether this role may do what {@code needed} may. */
  public boolean allows(Role needed) {
    return compareTo(needed) >= 0;
  }

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** A role by its name in settings and token files ({@code reader}, {@code operator}, ...). */
  public static Role parse(String name) {
    for (Role role : values()) {
      if (role.wireName().equals(name.trim().toLowerCase(Locale.ROOT))) {
        return role;
      }
    }
    throw new IllegalArgumentException(
        "Unknown role '" + name + "': expected 'reader', 'operator' or 'admin'");
  }
}
