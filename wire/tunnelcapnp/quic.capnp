# The messages of the reverse QUIC tunnel on UDP 50072 (ALPN stargate-quic/1),
# written from the facts in PROTOCOL.md. The file id, struct names and field
# ordinals are those of NVCF's crates/protocol/quic.capnp, so the bytes on the
# wire are the real system's. Regenerate the Go code with `make generate`.
@0xcccc1d2d6dc1a2ac;

using Go = import "/go.capnp";
$Go.package("tunnelcapnp");
$Go.import("github.com/nvcf/conformance/wire/tunnelcapnp");

# One message of a request stream (Stargate -> Pylon) or of its response
# (Pylon -> Stargate). Each side sends exactly one headers message first,
# then any number of body messages, then at most one trailers message, then
# finishes the stream.
struct Message {
  union {
    # Request headers hold "path" and "content-type"; response headers hold
    # "status_code". Names may repeat: each entry is one value.
    headers @0 :Map(Text, Text);
    # One chunk of the body.
    body @1 :Body;
    # Last message of a side; a response's trailers hold the final "status_code".
    trailers @2 :Map(Text, Text);
  }
}

struct Body {
  content @0 :Data;
}

# An ordered list of key/value pairs; a key may appear more than once.
struct Map(Key, Value) {
  entries @0 :List(Entry);
  struct Entry {
    key @0 :Key;
    value @1 :Value;
  }
}

# First message on the first stream Pylon opens.
struct Handshake {
  inferenceServerId @0 :Text;
  # Left null when Pylon has no token; the server tells null from "".
  authToken @1 :Text;
}

# Stargate's answer on the handshake stream.
struct HandshakeAck {
  accepted @0 :Bool;
  # Why the handshake was refused (empty when accepted).
  reason @1 :Text;
}
