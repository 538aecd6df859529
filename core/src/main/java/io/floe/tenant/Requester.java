package io.floe.tenant;

import io.floe.serialization.CborSerializable;
import java.util.Objects;
import java.util.Optional;

/**
 * Who asks to change a dataset or a job, as the gateway authenticated it, and whether it may change
 * what others own (an admin). Entities decide with it, so that the owner they compare with is the
 * one they hold at that moment: a drop can never pass a check made against an owner the dataset no
 * longer has.
 *
 * <p>The rules: a dataset is changed (dropped, refreshed, replaced by a load under its name) only
 * by a caller of the tenant that owns it; a job is dropped only by the caller that registered it;
 * an admin changes either whoever owns it. A legacy record (no owner) is the default tenant's, and
 * a legacy job may be dropped by any caller of the default tenant.
 *
 * @param owner what a dataset or job this requester creates is owned by
 */
public record Requester(Owner owner, boolean admin) implements CborSerializable {
  public Requester {
    Objects.requireNonNull(owner, "owner");
  }

  /** A caller who may change only what its tenant (datasets) or itself (jobs) owns. */
  public static Requester member(Owner owner) {
    return new Requester(owner, false);
  }

  /** A caller who may change what any tenant owns. */
  public static Requester administrator(Owner owner) {
    return new Requester(owner, true);
  }

  /**
   * Why this requester may not {@code change} (drop, refresh, replace) dataset {@code name} owned
   * by {@code recorded} (null for a legacy record); empty when it may.
   */
  public Optional<String> mayNotChangeDataset(String name, Owner recorded, String change) {
    Owner owned = Owner.orLegacy(recorded);
    if (admin || owned.tenant().equals(owner.tenant())) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            "Dataset '%s' belongs to tenant '%s'; '%s' of tenant '%s' may not %s it (only its"
                + " tenant's operators or an admin may)",
            name, owned.tenant(), owner.caller(), owner.tenant(), change));
  }

  /**
   * Why this requester may not drop job {@code id} registered by {@code recorded} (null for a
   * legacy record); empty when it may.
   */
  public Optional<String> mayNotDropJob(String id, Owner recorded) {
    Owner owned = Owner.orLegacy(recorded);
    boolean own =
        owned.caller() == null ? owned.tenant().equals(owner.tenant()) : owned.equals(owner);
    if (admin || own) {
      return Optional.empty();
    }
    String registeredBy =
        owned.caller() == null
            ? String.format("before owners were kept, in tenant '%s'", owned.tenant())
            : String.format("by '%s' of tenant '%s'", owned.caller(), owned.tenant());
    return Optional.of(
        String.format(
            "Job '%s' was registered %s; '%s' of tenant '%s' may not drop it (only the caller"
                + " that registered it or an admin may)",
            id, registeredBy, owner.caller(), owner.tenant()));
  }
}
