package faults

import (
	"errors"
	"os"

	"github.com/nvcf/conformance/faults/internal/nft"
)

// available reports why f cannot be injected on this machine, or nil:
// network faults (paths, partitions, DNS, downgrade) need root and nft;
// pod crashes need root to see and signal other users' processes. A
// scenario skips, naming the reason, rather than failing.
func available(f Fault) error {
	switch f.Action.(type) {
	case tcpFault, UDPFault, partition, DNSFault, Downgrade:
		return nft.Available()
	case podCrash:
		if os.Geteuid() != 0 {
			return errors.New("pod crashes read /proc of other users' processes and signal them: run as root")
		}
	case nil:
		return errors.New("fault has no Action")
	}
	return nil
}
