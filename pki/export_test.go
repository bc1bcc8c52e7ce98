package pki

import "time"

// Internals exposed to the external tests.

// TimeStale is (*Manifest).timeStale.
func TimeStale(m *Manifest, now time.Time) string { return m.timeStale(now) }

// ParseBundle is parseBundle.
var ParseBundle = parseBundle

// WrongHost is wrongHost.
var WrongHost = wrongHost
