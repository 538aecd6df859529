package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.JobSpec;
import io.floe.spec.DatasetSpec;
import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Typed reads of a message's fields, each failing with a message that names the field and value.
 * Requests refuse fields they do not know; replies ({@link #lenient}) leave them alone.
 */
final class Fields {
  private final ObjectNode node;
  private final String what;

  Fields(ObjectNode node, String what, Set<String> known) {
    this.node = node;
    this.what = what;
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            String.format(
                "Unknown field '%s' in %s; known fields: %s", Excerpt.of(name), what, known));
      }
    }
  }

  private Fields(ObjectNode node, String what) {
    this.node = node;
    this.what = what;
  }

  /**
   * Reads a reply: fields it does not know are left alone, so a client reads the replies of a node
   * newer than itself.
   */
  static Fields lenient(ObjectNode node, String what) {
    return new Fields(node, what);
  }

  String requiredString(String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("Missing field '" + field + "' in " + what);
    }
    if (!value.isTextual()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be a string, got %s", field, what, Excerpt.of(value)));
    }
    return value.asText();
  }

  /** The message's {@code kind} tag, which must be {@code kind}. */
  void requiredKind(String kind) {
    String found = requiredString("kind");
    if (!found.equals(kind)) {
      throw new IllegalArgumentException(
          String.format(
              "Field 'kind' in %s must be '%s', got '%s'", what, kind, Excerpt.of(found)));
    }
  }

  /** A dataset name (checked as {@link DatasetSpec#checkName} does). */
  String requiredDatasetName(String field) {
    return DatasetSpec.checkName(requiredString(field));
  }

  /** A job id (checked as {@link JobSpec#checkId} does). */
  String requiredJobId(String field) {
    return JobSpec.checkId(requiredString(field));
  }

  /** A free-form string of at most {@code maxLength} characters (a worker name, a lease id). */
  String optionalString(String field, int maxLength) {
    String value = optionalString(field);
    if (value != null && (value.isEmpty() || value.length() > maxLength)) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must have 1 to %d characters, got %d: '%s'",
              field, what, maxLength, value.length(), Excerpt.of(value)));
    }
    return value;
  }

  String optionalString(String field) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? null : requiredString(field);
  }

  Long optionalLong(String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be an integer, got %s", field, what, Excerpt.of(value)));
    }
    return value.asLong();
  }

  int optionalInt(String field, int defaultValue) {
    Long value = optionalLong(field);
    if (value == null) {
      return defaultValue;
    }
    if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          String.format("Field '%s' in %s is out of range: %s", field, what, value));
    }
    return value.intValue();
  }

  boolean optionalBoolean(String field, boolean defaultValue) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return defaultValue;
    }
    if (!value.isBoolean()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be true or false, got %s", field, what, Excerpt.of(value)));
    }
    return value.asBoolean();
  }

  List<String> optionalStrings(String field) {
    return optionalArray(field, "strings", JsonNode::isTextual, JsonNode::asText);
  }

  long requiredLong(String field) {
    Long value = optionalLong(field);
    if (value == null) {
      throw new IllegalArgumentException("Missing field '" + field + "' in " + what);
    }
    return value;
  }

  int requiredInt(String field) {
    requiredLong(field);
    return optionalInt(field, 0);
  }

  Double optionalDouble(String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isNumber()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be a number, got %s", field, what, Excerpt.of(value)));
    }
    return value.asDouble();
  }

  /** An object field, or null when it is absent. */
  ObjectNode optionalObject(String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isObject()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be an object, got %s", field, what, Excerpt.of(value)));
    }
    return (ObjectNode) value;
  }

  /** The objects of an array field; empty when it is absent. */
  List<ObjectNode> optionalObjects(String field) {
    return optionalArray(field, "objects", JsonNode::isObject, element -> (ObjectNode) element);
  }

  /** An array field's elements, each of {@code kind} and read by {@code read}; empty if absent. */
  private <T> List<T> optionalArray(
      String field, String kind, Predicate<JsonNode> isKind, Function<JsonNode, T> read) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return List.of();
    }
    if (!value.isArray()) {
      throw new IllegalArgumentException(
          String.format(
              "Field '%s' in %s must be an array of %s, got %s",
              field, what, kind, Excerpt.of(value)));
    }
    List<T> elements = new ArrayList<>();
    for (JsonNode element : value) {
      if (!isKind.test(element)) {
        throw new IllegalArgumentException(
            String.format(
                "Field '%s' in %s must hold only %s, got %s",
                field, what, kind, Excerpt.of(element)));
      }
      elements.add(read.apply(element));
    }
    return elements;
  }

  JsonNode raw(String field) {
    return node.get(field);
  }
}
