package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.ErrorFlightMetadata;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.grpc.StatusUtils;
import org.junit.jupiter.api.Test;

/**
 * Every code survives the trip through gRPC's trailers in the form clients receive it, and errors
 * without one (transport failures, other servers) are told apart rather than guessed.
 */
class ErrorCodeTest {
  /** The error as Flight's Java client would receive it from the wire. */
  private static FlightRuntimeException received(RuntimeException sent) {
    StatusRuntimeException wire = (StatusRuntimeException) StatusUtils.toGrpcException(sent);
    return StatusUtils.fromGrpcRuntimeException(wire);
  }

  @Test
  void everyCodeTravelsWithItsStatusAndDescription() {
    for (ErrorCode code : ErrorCode.values()) {
      FlightRuntimeException received = received(code.exception("what was wrong", null));
      assertThat(ErrorCode.of(received)).as(code.name()).contains(code);
      assertThat(received.status().description()).isEqualTo("what was wrong");
      FlightStatusCode expected =
          code.status() == ErrorCode.Status.FAILED_PRECONDITION
              // Flight's Java client folds gRPC's FAILED_PRECONDITION into INVALID_ARGUMENT.
              ? FlightStatusCode.INVALID_ARGUMENT
              : FlightStatusCode.valueOf(code.status().name());
      assertThat(received.status().code()).as(code.name()).isEqualTo(expected);
    }
  }

  @Test
  void errorsWithoutACodeHaveNone() {
    assertThat(ErrorCode.of(CallStatus.UNAVAILABLE.withDescription("gone").toRuntimeException()))
        .isEmpty();
    ErrorFlightMetadata other = new ErrorFlightMetadata();
    other.insert("x-other", "1");
    assertThat(
            ErrorCode.of(
                received(
                    CallStatus.INTERNAL
                        .withDescription("x")
                        .withMetadata(other)
                        .toRuntimeException())))
        .isEmpty();
    assertThat(ErrorCode.fromDetails("{\"code\": \"FROM_A_NEWER_NODE\"}".getBytes())).isEmpty();
    assertThat(ErrorCode.fromDetails("not json".getBytes())).isEmpty();
    assertThat(ErrorCode.fromDetails(new byte[0])).isEmpty();
    assertThat(ErrorCode.of(new IllegalStateException("local"))).isEmpty();
  }

  @Test
  void thePublishedSchemaListsEveryCode() throws Exception {
    JsonNode codes =
        Json.mapper()
            .readTree(Path.of("..", "docs", "protocol.schema.json").toFile())
            .at("/$defs/error_details/properties/code/enum");
    List<String> published = new ArrayList<>();
    codes.forEach(code -> published.add(code.asText()));
    assertThat(published)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(ErrorCode.values()).map(Enum::name).toList());
  }

  @Test
  void thePublishedSchemaListsTheRetryableCodes() throws Exception {
    JsonNode codes =
        Json.mapper()
            .readTree(Path.of("..", "docs", "protocol.schema.json").toFile())
            .at("/$defs/error_details/x-floe-retryable");
    List<String> published = new ArrayList<>();
    codes.forEach(code -> published.add(code.asText()));
    assertThat(published)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(ErrorCode.values())
                .filter(ErrorCode::retryable)
                .map(Enum::name)
                .toList());
  }

  @Test
  void detailsAreTheCodeAsJson() {
    assertThat(new String(ErrorCode.DATASET_NOT_READY.details()))
        .isEqualTo("{\"code\":\"DATASET_NOT_READY\"}");
    assertThat(ErrorCode.DATASET_NOT_READY.retryable()).isTrue();
    assertThat(ErrorCode.DATASET_NOT_FOUND.retryable()).isFalse();
  }
}
