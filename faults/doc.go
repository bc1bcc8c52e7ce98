// Package faults injects time-bounded network, pod, certificate, DNS and downgrade faults.
package faults
