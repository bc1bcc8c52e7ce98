// Package probe holds the harness's own clients of the system under test:
// a gRPC client of StargateControlPlane (WatchStargates and a rogue Pylon's
// RegisterInferenceServer with a chosen :authority, dial host and trust), a
// reverse-QUIC client (the tunnel handshake with a chosen SNI, client
// certificate and token), an HTTP client of Stargate's invocation API and of
// the reference roles' /status endpoints.
//
// Every probe dials through one Prober, which resolves external names
// through the harness's external DNS when one is given, records a
// transcript of what it tried and what happened, and classifies each
// failure into a typed reason (wire/reason) from the errors themselves:
// the TLS handshake's own error is captured before gRPC flattens it into a
// status string, and a connection that dies before a word was spoken is
// sniffed to tell a TLS peer from a plaintext one. Probes never skip
// certificate verification: a probe either trusts a pool of roots or speaks
// plaintext, on purpose.
package probe
