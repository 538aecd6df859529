package io.floe.ticket;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.protocol.Json;
import io.floe.util.Excerpt;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * One ticket type's wire form, the only place its fields are named: its {@code kind} tag, then its
 * fields in the order they are written. {@link TicketSigner} signs the bytes this writes, so every
 * field listed here is signed and no other text is.
 *
 * @param <T> the ticket type
 */
final class TicketCodec<T extends SignedTicket> {
  /** The tag every ticket starts with, naming its type. */
  static final String KIND = "kind";

  private final String kind;
  private final List<TicketField<T, ?>> fields;
  private final Function<ObjectNode, T> construct;
  private final Set<String> names;

  /**
   * @param construct builds the ticket from a JSON object by reading each of {@code fields}
   */
  TicketCodec(String kind, List<TicketField<T, ?>> fields, Function<ObjectNode, T> construct) {
    this.kind = kind;
    this.fields = List.copyOf(fields);
    this.construct = construct;
    Set<String> known = new LinkedHashSet<>();
    known.add(KIND);
    fields.forEach(field -> known.add(field.name()));
    this.names = Set.copyOf(known);
  }

  ObjectNode encode(T ticket) {
    ObjectNode node = Json.object();
    node.put(KIND, kind);
    for (TicketField<T, ?> field : fields) {
      field.write(node, ticket);
    }
    return node;
  }

  /**
   * The ticket {@code body} names, with nothing else in it: what a node verifies, so that what it
   * serves is exactly what it signed.
   *
   * @throws IllegalArgumentException for another kind, a field not of this type, or one missing or
   *     malformed
   */
  T decode(ObjectNode body) {
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!names.contains(name)) {
        throw new IllegalArgumentException(
            String.format("unknown field '%s' in a %s ticket", Excerpt.of(name), kind));
      }
    }
    return read(body);
  }

  /**
   * The ticket {@code node} names, leaving other fields (a signature, fields of a newer node)
   * alone: for a client reading what an endpoint serves.
   *
   * @throws IllegalArgumentException for another kind, or a field of its own missing or malformed
   */
  T read(ObjectNode node) {
    String found = kindOf(node);
    if (!kind.equals(found)) {
      throw new IllegalArgumentException(
          found == null
              ? String.format("no '%s' (a %s ticket has \"%s\": \"%s\")", KIND, kind, KIND, kind)
              : String.format("a '%s' ticket, not a %s ticket", Excerpt.of(found), kind));
    }
    return construct.apply(node);
  }

  /** The signed ticket types, by the {@code kind} they are tagged with. */
  private static List<TicketCodec<? extends SignedTicket>> all() {
    return List.of(FloeTicket.CODEC, JobTicket.CODEC);
  }

  /**
   * A ticket of either type, as its {@code kind} says, with nothing else in it.
   *
   * @throws IllegalArgumentException for a missing or unknown kind, or a body its type refuses
   */
  static SignedTicket decodeAny(ObjectNode body) {
    String kind = kindOf(body);
    for (TicketCodec<? extends SignedTicket> codec : all()) {
      if (codec.kind.equals(kind)) {
        return codec.decode(body);
      }
    }
    throw new IllegalArgumentException(
        String.format(
            "unknown kind %s (known: %s, %s)",
            kind == null ? "(none)" : "'" + Excerpt.of(kind) + "'",
            FloeTicket.CODEC.kind,
            JobTicket.CODEC.kind));
  }

  static ObjectNode encodeAny(SignedTicket ticket) {
    if (ticket instanceof FloeTicket slice) {
      return FloeTicket.CODEC.encode(slice);
    }
    return JobTicket.CODEC.encode((JobTicket) ticket);
  }

  private static String kindOf(ObjectNode node) {
    JsonNode kind = node.get(KIND);
    return kind != null && kind.isTextual() ? kind.asText() : null;
  }
}
