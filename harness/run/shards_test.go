package run

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/internal/syncbuf"
	"github.com/nvcf/conformance/reports"
)

func TestEnvironmentNames(t *testing.T) {
	require.Equal(t, "default", EnvironmentName("default", 0))
	require.Equal(t, "default-2", EnvironmentName("default", 1))
	require.Equal(t, "default-3", EnvironmentName("default", 2))
	for name, want := range map[string]bool{
		"default": true, "default-2": true, "default-12": true,
		"default-1": false, "default-02": false, "default-x": false, "default2": false, "other-2": false, "default-2-2": false,
	} {
		require.Equal(t, want, IsEnvironmentOf("default", name), name)
	}
}

// recordingProvider records which environments came up, how, and which
// went down.
type recordingProvider struct {
	mu           sync.Mutex
	up, down     []string
	besideByName map[string]bool
	// onDown runs as an environment goes down.
	onDown func(name string)
	// running are environments up before the run.
	running map[string]bool
}

func (p *recordingProvider) Up(_ context.Context, spec clusters.Spec, opts ...clusters.UpOption) (*clusters.Environment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = append(p.up, spec.Name)
	p.besideByName[spec.Name] = clusters.ApplyUpOptions(opts...).Beside
	return &clusters.Environment{Name: spec.Name, Kubeconfig: "/nonexistent"}, nil
}

func (p *recordingProvider) Down(_ context.Context, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = append(p.down, name)
	if p.onDown != nil {
		p.onDown(name)
	}
	return nil
}

func (p *recordingProvider) Status(_ context.Context, name string) (*clusters.Environment, error) {
	if p.running[name] {
		return &clusters.Environment{Name: name}, nil
	}
	return nil, clusters.ErrNotFound
}

// TestRunOnTwoEnvironments: a run on two environments brings up the
// topology's and <topology>-2 (that one beside the first), runs each part
// of the plan in the environment's own artifacts folder, brings both down,
// and reports every planned test once, as a run on one environment does.
func TestRunOnTwoEnvironments(t *testing.T) {
	bin, topo := fakeRun(t)
	art := t.TempDir()
	p := &recordingProvider{besideByName: map[string]bool{}}
	// The first environment's state folder holds the PKI that every
	// environment deploys from: none goes down before every suite ended.
	var suitesDone []bool
	p.onDown = func(string) {
		for _, env := range []string{"default", "default-2"} {
			_, err := os.Stat(filepath.Join(art, env, "suite-junit.xml"))
			suitesDone = append(suitesDone, err == nil)
		}
	}
	res, err := Run(context.Background(), Options{Topology: topo, Artifacts: art, Provider: p, BinDir: bin,
		StateDir: t.TempDir(), Layers: "tls", Workloads: "statefulset", Environments: 2, Stdout: &syncbuf.Buffer{}})
	if err != nil {
		for _, env := range []string{"default", "default-2"} {
			out, _ := os.ReadFile(filepath.Join(art, env, "suite-output.log"))
			t.Logf("%s: %s", env, out)
		}
	}
	require.NoError(t, err)

	require.ElementsMatch(t, []string{"default", "default-2"}, p.up)
	require.Equal(t, "default", p.up[0], "the first environment comes up first")
	require.Equal(t, map[string]bool{"default": false, "default-2": true}, p.besideByName)
	require.ElementsMatch(t, []string{"default", "default-2"}, p.down)
	require.Equal(t, []bool{true, true, true, true}, suitesDone, "every suite ended before the first environment went down")

	plan, err := os.ReadFile(filepath.Join(art, PlanFile))
	require.NoError(t, err)
	planned := strings.Split(strings.TrimSpace(string(plan)), "\n")
	require.Equal(t, len(planned), res.Summary.Total.Pass, "every planned test passed once")
	var names []string
	for _, c := range res.Report.Cases {
		names = append(names, c.Name)
		rel, err := filepath.Rel(art, c.Evidence)
		require.NoError(t, err)
		env := strings.Split(rel, string(filepath.Separator))[0]
		require.Contains(t, []string{"default", "default-2"}, env, "%s's evidence lies in its environment's folder", c.Name)
	}
	slices.Sort(names)
	slices.Sort(planned)
	require.Equal(t, planned, names)
	junit, err := os.ReadFile(filepath.Join(art, reports.JUnitFile))
	require.NoError(t, err)
	require.Contains(t, string(junit), `<property name="environments" value="2">`)
}

// TestFirstEnvironmentBesideALeftSideEnvironment: a side environment that
// an earlier run left up (killed, say) does not block the next run: its
// first environment comes up beside it, and the run leaves it up.
func TestFirstEnvironmentBesideALeftSideEnvironment(t *testing.T) {
	bin, topo := fakeRun(t)
	t.Setenv("FAKESUITE_REPORT", "1000") // every planned test passes
	p := &recordingProvider{besideByName: map[string]bool{}, running: map[string]bool{"default-3": true}}
	_, err := Run(context.Background(), Options{Topology: topo, Artifacts: t.TempDir(), Provider: p, BinDir: bin,
		StateDir: t.TempDir(), Layers: "tls", Workloads: "statefulset", Environments: 1, Stdout: &syncbuf.Buffer{}})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"default": true}, p.besideByName)
	require.Equal(t, []string{"default"}, p.down, "the left environment stays up")
}
