package pki

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// staleness says why the folder cannot be reused for inputs hash at now,
// or "" when it can.
func (m *Manifest) staleness(hash string, now time.Time) string {
	if m.InputHash != hash {
		return "inputs changed (request or system roots)"
	}
	if why := m.timeStale(now); why != "" {
		return why
	}
	return m.filesChanged()
}

// timeStale checks that every certificate is still in the state it was
// minted for, with a quarter of the validity to spare.
func (m *Manifest) timeStale(now time.Time) string {
	margin := m.Request.Validity / 4
	for _, a := range m.Artifacts {
		if a.Kind != KindCert {
			continue
		}
		switch a.Purpose {
		case ServerExpired, clientExpired:
			if !now.After(a.NotAfter) {
				return fmt.Sprintf("%s is no longer expired at %s (clock moved back?)", a.File, now.Format(time.RFC3339))
			}
		case serverNotYetValid:
			if a.NotBefore.Sub(now) < margin {
				return fmt.Sprintf("%s becomes valid at %s, less than %v away", a.File, a.NotBefore.Format(time.RFC3339), margin)
			}
		default:
			if now.Before(a.NotBefore) {
				return fmt.Sprintf("%s is not valid before %s (clock moved back?)", a.File, a.NotBefore.Format(time.RFC3339))
			}
			if a.NotAfter.Sub(now) < margin {
				return fmt.Sprintf("%s expires at %s, less than %v away", a.File, a.NotAfter.Format(time.RFC3339), margin)
			}
		}
	}
	return ""
}

// filesChanged checks that every file still has the content it was minted
// with (and the missing bundle is still missing).
func (m *Manifest) filesChanged() string {
	for _, a := range m.Artifacts {
		data, err := os.ReadFile(m.Path(a))
		if a.Absent {
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Sprintf("%s should not exist", a.File)
			}
			continue
		}
		if err != nil {
			return fmt.Sprintf("%s: %v", a.File, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != a.SHA256 {
			return fmt.Sprintf("%s was modified", a.File)
		}
	}
	return ""
}
