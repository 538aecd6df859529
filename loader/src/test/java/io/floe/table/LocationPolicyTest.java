package io.floe.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.error.ErrorKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  /**
   * S3 takes {@code secret/../warehouse/t} as a key under {@code secret/} (and Iceberg's S3FileIO
   * asks for exactly that key), where resolving the dots would put it under {@code warehouse/}: a
   * dot segment in an object-store location is refused, whichever way it points.
   */
  @Test
  void objectStoreLocationsWithDotSegmentsAreRefused() {
    for (String scheme : new String[] {"s3", "s3a", "s3n", "gs", "abfs"}) {
      LocationPolicy store = LocationPolicy.parse(scheme + "://lake/warehouse/");
      assertThat(store.allows(scheme + "://lake/warehouse/db/t/data/0.parquet")).isTrue();
      assertThat(store.allows(scheme + "://lake/secret/../warehouse/db/t/v1.metadata.json"))
          .isFalse();
      assertThat(store.allows(scheme + "://lake/warehouse/./db/t/v1.metadata.json")).isFalse();
      assertThat(store.allows(scheme + "://lake/warehouse/db/../db/t/v1.metadata.json")).isFalse();
    }
  }

  @Test
  void s3SchemesAreOneStore() {
    for (String prefix : new String[] {"s3://lake/warehouse/", "s3a://lake/warehouse/"}) {
      LocationPolicy s3 = LocationPolicy.parse(prefix);
      for (String scheme : new String[] {"s3", "s3a", "s3n", "S3A"}) {
        assertThat(s3.allows(scheme + "://lake/warehouse/db/t/data/0.parquet")).isTrue();
        assertThat(s3.allows(scheme + "://lake/warehouse/../secrets/t")).isFalse();
        assertThat(s3.allows(scheme + "://lake/warehouse2/t")).isFalse();
      }
      assertThat(s3.allows("gs://lake/warehouse/t")).isFalse();
    }
  }

  @Test
  void aLinkOutOfAnAllowedDirectoryIsRefused(@TempDir Path dir) throws IOException {
    Path allowed = Files.createDirectories(dir.resolve("allowed"));
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Files.writeString(outside.resolve("secret.txt"), "SECRET_TOKEN_123");
    Files.writeString(allowed.resolve("own.txt"), "fine");
    Files.createSymbolicLink(allowed.resolve("link"), outside);
    Files.createSymbolicLink(allowed.resolve("file-link.txt"), outside.resolve("secret.txt"));
    Files.createSymbolicLink(allowed.resolve("inner-link.txt"), allowed.resolve("own.txt"));
    LocationPolicy confined = LocationPolicy.parse(allowed + "/");

    assertThat(confined.allows(allowed.resolve("own.txt").toString())).isTrue();
    assertThat(confined.allows("file:" + allowed.resolve("inner-link.txt"))).isTrue();
    assertThat(confined.allows(allowed.resolve("not-yet/written.txt").toString())).isTrue();
    assertThat(confined.allows(allowed.resolve("link/secret.txt").toString())).isFalse();
    assertThat(confined.allows("file://" + allowed.resolve("file-link.txt"))).isFalse();
    // Not there yet: judged by the nearest parent that is, which the link takes outside.
    assertThat(confined.allows(allowed.resolve("link/not-yet/written.txt").toString())).isFalse();
  }

  @Test
  void aDanglingLinkIsRefused(@TempDir Path dir) throws IOException {
    Path allowed = Files.createDirectories(dir.resolve("allowed"));
    Files.createSymbolicLink(allowed.resolve("dangling.txt"), dir.resolve("outside/later.txt"));
    LocationPolicy confined = LocationPolicy.parse(allowed + "/");

    assertThat(confined.allows(allowed.resolve("dangling.txt").toString())).isFalse();
  }

  @Test
  void anAllowedPrefixThatIsALinkAllowsWhereItLeads(@TempDir Path dir) throws IOException {
    Path volume = Files.createDirectories(dir.resolve("volume/tables"));
    Files.writeString(volume.resolve("t.txt"), "fine");
    Path mount = Files.createSymbolicLink(dir.resolve("mount"), volume);
    LocationPolicy confined = LocationPolicy.parse("file:" + mount + "/");

    assertThat(confined.allows(mount.resolve("t.txt").toString())).isTrue();
    assertThat(confined.allows(volume.resolve("t.txt").toString())).isTrue();
    assertThat(confined.allows(dir.resolve("volume/other.txt").toString())).isFalse();
  }

  @Test
  void aRefusedLinkIsNamedAsAskedNotByWhereItLeads(@TempDir Path dir) throws IOException {
    Path allowed = Files.createDirectories(dir.resolve("allowed"));
    Path outside = Files.createDirectories(dir.resolve("outside-area"));
    Files.writeString(outside.resolve("secret.txt"), "SECRET_TOKEN_123");
    Files.createSymbolicLink(allowed.resolve("v1.metadata.json"), outside.resolve("secret.txt"));
    String asked = "file:" + allowed.resolve("v1.metadata.json");

    assertThatThrownBy(() -> LocationPolicy.parse(allowed + "/").check(asked))
        .isInstanceOfSatisfying(
            StorageFailure.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.LOCATION_NOT_ALLOWED);
              assertThat(e.getMessage())
                  .contains(io.floe.util.Excerpt.of(asked))
                  .contains("symbolic link")
                  .contains("outside the locations this node may read")
                  .doesNotContain("outside-area")
                  .doesNotContain("SECRET");
            });
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
              assertThat(e.kind()).isEqualTo(ErrorKind.LOCATION_NOT_ALLOWED);
              assertThat(e.getMessage())
                  .contains("/etc/passwd")
                  .contains("s3://lake/warehouse/")
                  .contains("FLOE_ALLOWED_LOCATIONS");
            });
    io.close();
  }
}
