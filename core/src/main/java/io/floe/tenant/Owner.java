package io.floe.tenant;

import io.floe.serialization.CborSerializable;
import io.floe.util.Preconditions;
import java.util.regex.Pattern;

/**
 * Who owns a dataset or a job: the tenant of the caller that loaded or registered it, and that
 * caller's name. Kept in the replicated (and persisted) dataset and job records, so it survives
 * moves and restarts.
 *
 * <p>Records written before Floe knew owners have none; they are read as {@link #LEGACY}: owned by
 * the {@link #DEFAULT_TENANT}, whose callers are every caller of a token file that names no tenant,
 * so an upgraded cluster's operators and readers keep managing what they managed before.
 *
 * @param caller the caller's name (a token file's name, or {@code system:serviceaccount:ns:name});
 *     null for a legacy record, which no one caller registered
 */
public record Owner(String tenant, String caller) implements CborSerializable {
  // Before LEGACY: its constructor checks the tenant with it.
  /** A tenant's name: a Kubernetes namespace's rules (DNS label, 1-63 characters). */
  private static final Pattern TENANT = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** The tenant of callers whose token names none, of anonymous callers and of legacy records. */
  public static final String DEFAULT_TENANT = "default";

  /** The owner of a record written before owners were recorded. */
  public static final Owner LEGACY = new Owner(DEFAULT_TENANT, null);

  public Owner {
    Preconditions.checkArgument(tenant != null, "Invalid owner: no tenant");
    checkTenant(tenant);
  }

  /** The owner as recorded, or {@link #LEGACY} for a record that has none. */
  public static Owner orLegacy(Owner recorded) {
    return recorded == null ? LEGACY : recorded;
  }

  /**
   * @throws IllegalArgumentException unless {@code tenant} is a valid tenant name
   */
  public static String checkTenant(String tenant) {
    Preconditions.checkArgument(
        tenant != null && TENANT.matcher(tenant).matches(),
        "Invalid tenant '%s': expected lower-case letters, digits and '-', 1-63 characters,"
            + " as a Kubernetes namespace",
        tenant);
    return tenant;
  }

  /** As status and list show it: {@code tenant/caller}, or the tenant alone for a legacy record. */
  @Override
  public String toString() {
    return caller == null ? tenant : tenant + "/" + caller;
  }
}
