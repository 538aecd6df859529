package io.floe.protocol;

import com.fasterxml.jackson.core.ErrorReportConfiguration;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.util.Excerpt;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The one JSON codec of Floe's wire protocol (docs/protocol.md). */
public final class Json {
  /** Bytes of a request body (an action's, a descriptor's command) at most. */
  public static final int MAX_BODY_BYTES = 1 << 20;

  /** Nesting of a request body at most: an Iceberg filter expression of a few hundred terms. */
  public static final int MAX_NESTING_DEPTH = 512;

  private static final ObjectMapper MAPPER =
      new ObjectMapper(
              JsonFactory.builder()
                  .streamReadConstraints(
                      StreamReadConstraints.builder()
                          .maxNestingDepth(MAX_NESTING_DEPTH)
                          .maxStringLength(MAX_BODY_BYTES)
                          .maxNumberLength(64)
                          .build())
                  // Parse errors quote the token they choked on: no more of it than Excerpt would.
                  .errorReportConfiguration(
                      ErrorReportConfiguration.builder()
                          .maxErrorTokenLength(Excerpt.MAX_CHARS)
                          .maxRawContentLength(0)
                          .build())
                  .build())
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private Json() {}

  /** The mapper behind this codec, for the protocol's own readers. */
  static ObjectMapper mapper() {
    return MAPPER;
  }

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  /**
   * Parses a request body that must be a JSON object.
   *
   * @param what names the request in the error, e.g. "load action body"
   * @throws IllegalArgumentException naming what was malformed
   */
  public static ObjectNode parseObject(byte[] body, String what) {
    if (body == null || body.length == 0) {
      throw new IllegalArgumentException("Empty " + what + ": expected a JSON object");
    }
    if (body.length > MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          String.format(
              "Invalid %s: %d bytes, more than the %d a request may have",
              what, body.length, MAX_BODY_BYTES));
    }
    JsonNode node;
    try {
      node = MAPPER.readTree(body);
    } catch (IOException e) {
      throw new IllegalArgumentException("Malformed " + what + ": " + firstLine(e.getMessage()), e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException(
          "Invalid " + what + ": expected a JSON object, got " + Excerpt.of(utf8(body)));
    }
    return (ObjectNode) node;
  }

  /**
   * Parses a node's reply, which is {@code what} (a JSON object, or an array for lists). Replies
   * come from a node the caller chose, so the request limits do not apply to them.
   *
   * @throws IllegalArgumentException naming what was malformed
   */
  static JsonNode parseReply(byte[] body, String what) {
    try {
      JsonNode node = MAPPER.readTree(body);
      if (node == null) {
        throw new IllegalArgumentException("Empty " + what);
      }
      return node;
    } catch (IOException e) {
      throw new IllegalArgumentException("Malformed " + what + ": " + firstLine(e.getMessage()), e);
    }
  }

  public static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String string(JsonNode node) {
    return new String(bytes(node), StandardCharsets.UTF_8);
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable JSON";
    }
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    // The parser quotes at most a bounded token of the input; its words around it are short.
    return Excerpt.description(line);
  }

  private static String utf8(byte[] body) {
    return new String(body, StandardCharsets.UTF_8);
  }
}
