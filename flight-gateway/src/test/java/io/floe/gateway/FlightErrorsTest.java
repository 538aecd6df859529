package io.floe.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.protocol.ErrorCode;
import io.floe.spec.InvalidSpecException;
import java.util.concurrent.CompletionException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What a request's failure becomes on the wire: a {@link FloeException}'s kind decides the code;
 * nothing else is looked at, so an exception from inside a library is the node's failure (INTERNAL,
 * logged with its stack trace) whatever its class says.
 */
class FlightErrorsTest {
  private final Logger log = (Logger) LoggerFactory.getLogger(FlightErrors.class);
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

  @BeforeEach
  void listen() {
    logged.start();
    log.addAppender(logged);
  }

  @AfterEach
  void stopListening() {
    log.detachAppender(logged);
  }

  private static ErrorCode codeOf(RuntimeException sent) {
    return ErrorCode.of(sent).orElseThrow();
  }

  @Test
  void anArgumentErrorFromInsideIcebergIsTheNodesFailureAndIsLogged() {
    // What Iceberg throws while planning a filtered scan it cannot project, as a plan's future
    // hands it on.
    IllegalArgumentException iceberg =
        new IllegalArgumentException(
            "Cannot explicitly project List or Map types, 3:emb of type list<float> was selected");

    RuntimeException sent = FlightErrors.wrap(new CompletionException(iceberg));

    assertThat(codeOf(sent)).isEqualTo(ErrorCode.INTERNAL);
    assertThat(((FlightRuntimeException) sent).status().code())
        .isEqualTo(FlightStatusCode.INTERNAL);
    assertThat(logged.list)
        .singleElement()
        .satisfies(
            event -> {
              assertThat(event.getLevel()).isEqualTo(Level.WARN);
              assertThat(event.getThrowableProxy()).isNotNull();
              assertThat(event.getThrowableProxy().getClassName())
                  .isEqualTo(IllegalArgumentException.class.getName());
            });
  }

  @Test
  void aFloeExceptionWrappedByALibraryIsNotDugOut() {
    RuntimeException wrapped =
        new RuntimeException(
            "Failed to plan", new FloeException(ErrorKind.STORAGE_UNAVAILABLE, "store away"));

    assertThat(codeOf(FlightErrors.wrap(wrapped))).isEqualTo(ErrorCode.INTERNAL);
  }

  @Test
  void everyKindIsSentAsItsCodeWithItsMessageAndNotLogged() {
    for (ErrorKind kind : ErrorKind.values()) {
      RuntimeException sent =
          FlightErrors.wrap(new CompletionException(new FloeException(kind, "what was wrong")));

      assertThat(codeOf(sent)).as(kind.name()).isEqualTo(ErrorCode.of(kind));
      assertThat(((FlightRuntimeException) sent).status().description())
          .isEqualTo("what was wrong");
    }
    assertThat(logged.list).isEmpty();
  }

  @Test
  void floesOwnChecksAreTheCallersMistake() {
    assertThat(codeOf(FlightErrors.wrap(new InvalidSpecException("Unknown column 'x'"))))
        .isEqualTo(ErrorCode.INVALID_REQUEST);
  }
}
