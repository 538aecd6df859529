package io.floe.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LocationPolicyTest {
  private final LocationPolicy policy =
      LocationPolicy.parse("s3://lake/warehouse/, file:/data/tables/");

  @Test
  void allowsWhatIsUnderAPrefix() {
    assertThat(policy.allows("s3://lake/warehouse/db/t/metadata/v1.metadata.json")).isTrue();
    assertThat(policy.allows("/data/tables/events")).isTrue();
    assertThat(policy.allows("file:/data/tables/events/data/0.parquet")).isTrue();
    assertThat(policy.allows("file:///data/tables/events")).isTrue();
  }

  @Test
  void refusesWhatEscapesOrLiesBeside() {
    assertThat(policy.allows("s3://lake/warehouse/../secrets/t")).isFalse();
    assertThat(policy.allows("/data/tables/../../etc/passwd")).isFalse();
    assertThat(policy.allows("file:/data/tables/../other")).isFalse();
    assertThat(policy.allows("/data/tables-other/t")).isFalse();
    assertThat(policy.allows("s3://lake/warehouse2/t")).isFalse();
    assertThat(policy.allows("s3://other/warehouse/t")).isFalse();
    assertThat(policy.allows("gs://lake/warehouse/t")).isFalse();
  }

  @Test
  void emptyAllowsNothingAndStarAnything() {
    assertThat(LocationPolicy.parse("").allows("/tmp/t")).isFalse();
    assertThat(LocationPolicy.parse("*").allows("/tmp/t")).isTrue();
    assertThat(LocationPolicy.any().allows("s3://any/where")).isTrue();
  }

  @Test
  void aConfinedFileIoRefusesEveryFileOutsideBeforeOpeningIt() {
    FloeFileIO io = new FloeFileIO();
    io.initialize(java.util.Map.of());
    io.confine(policy);
    assertThatThrownBy(() -> io.newInputFile("/etc/passwd"))
        .isInstanceOfSatisfying(
            StorageFailure.class,
            e -> {
              assertThat(e.reason()).isEqualTo(StorageFailure.Reason.LOCATION_NOT_ALLOWED);
              assertThat(e.getMessage())
                  .contains("/etc/passwd")
                  .contains("s3://lake/warehouse/")
                  .contains("FLOE_ALLOWED_LOCATIONS");
            });
    io.close();
  }
}
