package io.floe.ticket;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * One field of a ticket type: its wire name (written here and nowhere else), how its value is taken
 * from a ticket, and how it is written and read. A field with a default is left out of the ticket
 * while it has that value, and an absent one reads as it, so a field added later keeps the bytes of
 * tickets that do not use it.
 *
 * @param <T> the ticket type
 * @param <V> the field's value type
 */
final class TicketField<T, V> {
  /** How a value of one JSON type is written and read. */
  private interface Type<V> {
    void write(ObjectNode node, String name, V value);

    /** {@code value} as this type, or null if it is not of it. */
    V read(JsonNode value);

    String description();
  }

  private static final Type<String> TEXT =
      new Type<>() {
        @Override
        public void write(ObjectNode node, String name, String value) {
          node.put(name, value);
        }

        @Override
        public String read(JsonNode value) {
          return value.isTextual() ? value.asText() : null;
        }

        @Override
        public String description() {
          return "a string";
        }
      };

  private static final Type<Long> INT64 =
      new Type<>() {
        @Override
        public void write(ObjectNode node, String name, Long value) {
          node.put(name, value);
        }

        @Override
        public Long read(JsonNode value) {
          return value.isIntegralNumber() && value.canConvertToLong() ? value.asLong() : null;
        }

        @Override
        public String description() {
          return "an integer";
        }
      };

  private static final Type<Integer> INT32 =
      new Type<>() {
        @Override
        public void write(ObjectNode node, String name, Integer value) {
          node.put(name, value);
        }

        @Override
        public Integer read(JsonNode value) {
          return value.isIntegralNumber() && value.canConvertToInt() ? value.asInt() : null;
        }

        @Override
        public String description() {
          return "a 32-bit integer";
        }
      };

  private static final Type<Boolean> BOOL =
      new Type<>() {
        @Override
        public void write(ObjectNode node, String name, Boolean value) {
          node.put(name, value);
        }

        @Override
        public Boolean read(JsonNode value) {
          return value.isBoolean() ? value.asBoolean() : null;
        }

        @Override
        public String description() {
          return "true or false";
        }
      };

  private static final Type<List<String>> TEXTS =
      new Type<>() {
        @Override
        public void write(ObjectNode node, String name, List<String> value) {
          value.forEach(node.putArray(name)::add);
        }

        @Override
        public List<String> read(JsonNode value) {
          if (!value.isArray()) {
            return null;
          }
          List<String> texts = new ArrayList<>();
          for (JsonNode element : value) {
            if (!element.isTextual()) {
              return null;
            }
            texts.add(element.asText());
          }
          return List.copyOf(texts);
        }

        @Override
        public String description() {
          return "an array of strings";
        }
      };

  private final String name;
  private final Function<T, V> value;
  private final Type<V> type;
  private final V absent;

  private TicketField(String name, Function<T, V> value, Type<V> type, V absent) {
    this.name = name;
    this.value = value;
    this.type = type;
    this.absent = absent;
  }

  static <T> TicketField<T, String> text(String name, Function<T, String> value) {
    return new TicketField<>(name, value, TEXT, null);
  }

  static <T> TicketField<T, Long> int64(String name, Function<T, Long> value) {
    return new TicketField<>(name, value, INT64, null);
  }

  static <T> TicketField<T, Integer> int32(String name, Function<T, Integer> value) {
    return new TicketField<>(name, value, INT32, null);
  }

  static <T> TicketField<T, Boolean> bool(String name, Function<T, Boolean> value) {
    return new TicketField<>(name, value, BOOL, null);
  }

  static <T> TicketField<T, List<String>> texts(String name, Function<T, List<String>> value) {
    return new TicketField<>(name, value, TEXTS, null);
  }

  /** This field, left out while it is {@code value} and read as it when absent. */
  TicketField<T, V> byDefault(V value) {
    return new TicketField<>(name, this.value, type, Objects.requireNonNull(value));
  }

  String name() {
    return name;
  }

  void write(ObjectNode node, T ticket) {
    V v = value.apply(ticket);
    if (absent == null || !absent.equals(v)) {
      type.write(node, name, v);
    }
  }

  /**
   * @throws IllegalArgumentException if the field is missing (and has no default) or not of its
   *     type, naming the field and quoting the value short
   */
  V read(ObjectNode node) {
    JsonNode raw = node.get(name);
    if (raw == null) {
      if (absent == null) {
        throw new IllegalArgumentException("missing '" + name + "'");
      }
      return absent;
    }
    V read = type.read(raw);
    if (read == null) {
      throw new IllegalArgumentException(
          String.format("'%s' must be %s, got %s", name, type.description(), Excerpt.of(raw)));
    }
    return read;
  }
}
