package campaignrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/campaign"
)

func span(d time.Duration) campaign.Span { return campaign.Span(d) }

// A shrinking trial keeps its faults' order, overlaps and gaps, and only
// drops the idle time before them and after them.
func TestCompactKeepsOverlapsAndDropsIdleTime(t *testing.T) {
	s := campaign.Schedule{Version: campaign.Version, Duration: span(10 * time.Minute), Settle: span(time.Minute), Faults: []campaign.Fault{
		{ID: 3, Kind: campaign.Partition, Target: "workers->region-a", Start: span(200 * time.Second), Duration: span(30 * time.Second)},
		{ID: 7, Kind: campaign.StargateKill, Target: "region-a", Start: span(220 * time.Second), Duration: span(5 * time.Second)},
	}}
	c := compact(s)
	require.Equal(t, span(5*time.Second), c.Faults[0].Start)
	require.Equal(t, span(25*time.Second), c.Faults[1].Start, "the second fault still starts 20 s after the first, inside it")
	require.Equal(t, span(36*time.Second), c.Duration, "the window ends a second after the last heal")
	require.Equal(t, s.Settle, c.Settle)
	require.Equal(t, span(200*time.Second), s.Faults[0].Start, "the original schedule is left alone")

	early := campaign.Schedule{Duration: span(time.Minute), Faults: []campaign.Fault{{ID: 1, Start: span(2 * time.Second), Duration: span(5 * time.Second)}}}
	require.Equal(t, span(2*time.Second), compact(early).Faults[0].Start, "a fault already near the start does not move before zero")
	require.Empty(t, compact(campaign.Schedule{}).Faults)
}
