// Package pki mints good and deliberately bad PKI with cfssl for a
// topology's names: a trusted root of the ingress and client certificates
// and one of the QUIC relay certificates (each optionally with an
// intermediate), a wrong root nobody trusts, an unrelated root that signs
// nothing, per-cluster server certificates for the TLS ingress and the QUIC
// relay (good, wrong host, expired, not yet valid, wrong root, no
// server-auth usage, CN without SAN; for the ingress also one covering the
// :authority identities alone), reverse-QUIC client
// certificates (good, wrong root, expired), and trust bundles (custom,
// merged system+custom, missing, empty, partially malformed, unrelated,
// and each plane's root alone).
//
// Mint takes plain data (a Request; package pkitopo derives one from a
// topology) and writes a folder with a manifest.json that names every
// artifact, its purpose, SANs, validity, issuer, the name it is verified
// for and the typed reason (package wire/reason) it must fail with.
// The folder also holds Kubernetes Secrets (kubernetes.io/tls) and the
// nvcf-transport-trust-bundle ConfigMaps as YAML, which Manifest.Secrets
// and Manifest.ConfigMaps return as k8s.io/api values. Unchanged inputs
// reuse the folder; see pki/README.md for the layout and the rules.
package pki
