package io.floe.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Who may change what: a dataset by its tenant's callers, a job by the caller that registered it,
 * both by an admin; records from before owners are the default tenant's, and their jobs any of its
 * callers'. Refusals name the dataset or job and both sides.
 */
class RequesterTest {
  private static final Owner OPS_A = new Owner("team-a", "ops");
  private static final Owner OTHER_A = new Owner("team-a", "other");
  private static final Owner OPS_B = new Owner("team-b", "ops");
  private static final Owner OLD_LINE = new Owner(Owner.DEFAULT_TENANT, "ops");

  @Test
  void aDatasetIsChangedByItsTenantOrAnAdmin() {
    assertThat(Requester.member(OTHER_A).mayNotChangeDataset("clicks", OPS_A, "drop")).isEmpty();
    assertThat(Requester.member(OPS_B).mayNotChangeDataset("clicks", OPS_A, "drop"))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains("Dataset 'clicks' belongs to tenant 'team-a'")
                    .contains("'ops' of tenant 'team-b' may not drop it"));
    assertThat(Requester.administrator(OPS_B).mayNotChangeDataset("clicks", OPS_A, "drop"))
        .isEmpty();
  }

  @Test
  void aJobIsDroppedByItsCallerOrAnAdmin() {
    assertThat(Requester.member(OPS_A).mayNotDropJob("train", OPS_A)).isEmpty();
    assertThat(Requester.member(OTHER_A).mayNotDropJob("train", OPS_A))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains("Job 'train' was registered by 'ops' of tenant 'team-a'")
                    .contains("'other' of tenant 'team-a' may not drop it"));
    // The same name in another tenant is another caller.
    assertThat(Requester.member(OPS_B).mayNotDropJob("train", OPS_A)).isPresent();
    assertThat(Requester.administrator(OPS_B).mayNotDropJob("train", OPS_A)).isEmpty();
  }

  @Test
  void recordsWithoutAnOwnerAreTheDefaultTenants() {
    assertThat(Requester.member(OLD_LINE).mayNotChangeDataset("old", null, "refresh")).isEmpty();
    assertThat(Requester.member(OPS_A).mayNotChangeDataset("old", null, "refresh"))
        .hasValueSatisfying(why -> assertThat(why).contains("belongs to tenant 'default'"));
    assertThat(
            Requester.member(new Owner(Owner.DEFAULT_TENANT, "anyone")).mayNotDropJob("old", null))
        .isEmpty();
    assertThat(Requester.member(OPS_A).mayNotDropJob("old", null))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains("registered before owners were kept, in tenant 'default'"));
  }
}
