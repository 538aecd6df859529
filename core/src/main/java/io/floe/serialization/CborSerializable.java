package io.floe.serialization;

/**
 * Marker for every message that may cross the cluster. Bound to Pekko's Jackson CBOR serializer in
 * the actors module's reference.conf, so adding a message type never needs a config change.
 */
public interface CborSerializable {}
