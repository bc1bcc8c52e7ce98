// Package faults injects time-bounded faults into a running environment:
// network faults on the paths between clusters (TCP toxics through an
// embedded toxiproxy, UDP impairments for QUIC, partitions), pod faults
// (delete, crash, scale), certificate rotation, DNS answers and TLS
// downgrade.
//
// A Fault is a value (name, target, action, start delay, duration). Start
// injects it and always runs its undo (when the duration ends, the context
// ends or Stop is called), record when it was
// active in a Recorder, and journal it in the state directory so that
// CleanupLeftovers removes what a killed run left behind. See faults/README.md
// (Leftovers), and docs/operations.md for cleaning up after a kill.
package faults
