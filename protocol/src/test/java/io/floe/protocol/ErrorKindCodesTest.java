package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.floe.error.ErrorKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every {@link ErrorKind} goes on the wire as one code, the one clients have always received for
 * it, and the code promises the retry the kind does.
 */
class ErrorKindCodesTest {
  private static final Map<ErrorKind, ErrorCode> WIRE = new EnumMap<>(ErrorKind.class);

  static {
    WIRE.put(ErrorKind.INVALID_ARGUMENT, ErrorCode.INVALID_REQUEST);
    WIRE.put(ErrorKind.ALREADY_EXISTS, ErrorCode.ALREADY_EXISTS);
    WIRE.put(ErrorKind.NOT_FOUND, ErrorCode.TABLE_NOT_FOUND);
    WIRE.put(ErrorKind.DATASET_NOT_FOUND, ErrorCode.DATASET_NOT_FOUND);
    WIRE.put(ErrorKind.JOB_NOT_FOUND, ErrorCode.JOB_NOT_FOUND);
    WIRE.put(ErrorKind.LEASE_NOT_FOUND, ErrorCode.LEASE_NOT_FOUND);
    WIRE.put(ErrorKind.LOCATION_NOT_ALLOWED, ErrorCode.PERMISSION_DENIED);
    WIRE.put(ErrorKind.NOT_OWNER, ErrorCode.PERMISSION_DENIED);
    WIRE.put(ErrorKind.STORAGE_ACCESS_DENIED, ErrorCode.STORAGE_ACCESS_DENIED);
    WIRE.put(ErrorKind.STORAGE_UNAVAILABLE, ErrorCode.STORAGE_UNAVAILABLE);
    WIRE.put(ErrorKind.UNREADABLE_DATA, ErrorCode.UNREADABLE_DATA);
    WIRE.put(ErrorKind.RESOURCE_EXHAUSTED, ErrorCode.MEMORY_EXHAUSTED);
    WIRE.put(ErrorKind.INTERNAL, ErrorCode.INTERNAL);
  }

  @Test
  void everyKindHasItsCode() {
    assertThat(WIRE.keySet()).containsExactlyInAnyOrder(ErrorKind.values());
    for (ErrorKind kind : ErrorKind.values()) {
      assertThat(ErrorCode.of(kind)).as(kind.name()).isEqualTo(WIRE.get(kind));
    }
  }

  @Test
  void thePublishedSchemaListsEveryKind() throws Exception {
    JsonNode kinds =
        Json.mapper()
            .readTree(Path.of("..", "docs", "protocol.schema.json").toFile())
            .at("/$defs/error/properties/kind/enum");
    List<String> published = new ArrayList<>();
    kinds.forEach(kind -> published.add(kind.asText()));
    assertThat(published)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(ErrorKind.values()).map(Enum::name).toList());
  }

  @Test
  void aKindsCodeIsRetryableExactlyWhenTheKindIs() {
    for (ErrorKind kind : ErrorKind.values()) {
      assertThat(ErrorCode.of(kind).retryable()).as(kind.name()).isEqualTo(kind.retryable());
    }
  }
}
