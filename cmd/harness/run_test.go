package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/deploy/manifests"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// --image-binary is the one image → binary flag of `up` and `run`:
// comma-separated or repeated, paths made absolute.
func TestImageBinariesFlag(t *testing.T) {
	f := imageBinaries{}
	require.NoError(t, f.Set("stargate=/opt/sg, pylon=/opt/pylon"))
	require.NoError(t, f.Set("nvcf-ref=bin/nvcf-ref"))
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, imageBinaries{"stargate": "/opt/sg", "pylon": "/opt/pylon", "nvcf-ref": filepath.Join(wd, "bin/nvcf-ref")}, f)

	for _, bad := range []string{"stargate", "stargate=", "=/x"} {
		require.Error(t, imageBinaries{}.Set(bad), bad)
	}
}

func TestExitCodesTellVerdictFromHarnessFailure(t *testing.T) {
	require.Equal(t, 0, exitCode(nil))
	require.Equal(t, 0, exitCode(flag.ErrHelp))
	require.Equal(t, 1, exitCode(fmt.Errorf("run: %w: 2 failed", harnessrun.ErrFailed)))
	require.Equal(t, 2, exitCode(fmt.Errorf("run: %w: 3 never ran", harnessrun.ErrIncomplete)))
	require.Equal(t, 2, exitCode(errors.New("bring up topology: boom")))
}

// A run on existing clusters suggests commands (a case's repro, bringing
// kept clusters down) with the provider flags it was given; the embedded
// provider's need none.
func TestProviderArgsRepeatTheFlags(t *testing.T) {
	var pf providerFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	pf.register(fs)
	require.NoError(t, fs.Parse(nil))
	require.Empty(t, pf.args())
	require.NoError(t, fs.Parse([]string{"--provider", "existing", "--kubeconfig", "/k/config", "--context", "workers=w,region-a=a", "--dns", "127.0.0.88:53"}))
	require.Equal(t, []string{"--provider", "existing", "--kubeconfig", "/k/config", "--context", "region-a=a,workers=w", "--dns", "127.0.0.88:53"}, pf.args())
}

// --environments is checked before anything starts: a negative count, and
// more than one environment on a provider that runs one.
func TestEnvironmentsFlag(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"run", "--environments", "-1", "--topology", "../../topologies/default.yaml"}, &out, &errb)
	require.ErrorContains(t, err, "--environments -1: want 1 or more, or 0 for the provider's default")
	err = run(ctx, []string{"run", "--provider", "existing", "--environments", "2", "--kubeconfig", "/nonexistent", "--topology", "../../topologies/default.yaml"}, &out, &errb)
	require.ErrorContains(t, err, "--environments 2: the existing provider runs one environment of a topology")
}

// --real with --nvcf-bin-dir is a whole real run: the nvcf flavor, an
// nvcf/<binary> image per real role, and on the embedded provider that
// image mapped to the binary in the folder; what is missing is named.
func TestRealComponentsComplete(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []string{"stargate", "stargate-k8s-router"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755))
	}
	flags := func(args ...string) (*runFlags, *harnessrun.Options) {
		var o harnessrun.Options
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := matrixFlags(fs, &o)
		require.NoError(t, fs.Parse(args))
		var err error
		o.Real, err = catalog.ParseReal(f.real)
		require.NoError(t, err)
		o.Flavor, err = manifests.ParseFlavor(f.flavor)
		require.NoError(t, err)
		return f, &o
	}

	f, o := flags("--real", "stargate,router", "--nvcf-bin-dir", dir)
	require.NoError(t, f.realComponents(o))
	require.Equal(t, manifests.FlavorNVCF, o.Flavor)
	require.Equal(t, "nvcf/stargate", o.Images.Stargate)
	require.Equal(t, "nvcf/stargate-k8s-router", o.Images.Router)
	require.Empty(t, o.Images.Pylon, "pylon stays the reference one")
	require.Equal(t, imageBinaries{"stargate": filepath.Join(dir, "stargate"), "stargate-k8s-router": filepath.Join(dir, "stargate-k8s-router")}, f.imageMap)

	f, o = flags("--real", "pylon", "--nvcf-bin-dir", dir)
	require.ErrorContains(t, f.realComponents(o), "holds no pylon binary")
	f, o = flags("--real", "pylon", "--nvcf-bin-dir", "")
	require.ErrorContains(t, f.realComponents(o), "--nvcf-bin-dir DIR")
	f, o = flags("--real", "pylon", "--image-binary", "pylon=/opt/pylon", "--nvcf-bin-dir", "")
	require.NoError(t, f.realComponents(o), "an explicit --image-binary needs no folder")
	f, o = flags("--real", "stargate", "--flavor", "reference", "--nvcf-bin-dir", dir)
	require.ErrorContains(t, f.realComponents(o), "--flavor nvcf")
}

// Every case of the whole plan (the DNS and insecure cells too) names a
// repro command that, parsed back through `harness run`'s flags, plans
// exactly its cell and exactly that case: a repro that dropped an axis
// (--discovery, --profile) would plan other cells as well.
func TestReproPlansExactlyItsCellAndCase(t *testing.T) {
	full := harnessrun.Options{TopologyRef: "topologies/default.yaml", BinDir: "/b", Artifacts: "/a", TimeScale: 2,
		ProviderArgs: []string{"--provider", "existing", "--kubeconfig", "/my kube/config"}}
	plan, err := full.Plan()
	require.NoError(t, err)
	insecure, dns := false, false
	for _, c := range plan {
		insecure = insecure || c.Cell == matrix.InsecureCell
		dns = dns || c.Cell.Discovery == matrix.DNS
		repro := full.Repro(reports.CaseResult{ID: c.Scenario.ID, Name: c.Name(), Cell: c.Cell.Name()})
		args := shellWords(t, repro)
		require.Equal(t, []string{"/b/harness", "run"}, args[:2], repro)
		fs, o, mf, _ := runFlagSet(io.Discard)
		require.NoError(t, fs.Parse(args[2:]), repro)
		require.Zero(t, fs.NArg(), repro)
		require.Equal(t, "existing", mf.provider.name, repro)
		require.Equal(t, 2.0, o.TimeScale, repro)

		f, err := matrix.ParseFilter(o.Workloads, o.Trusts, o.Discoveries, o.Profiles)
		require.NoError(t, err, repro)
		cells, err := matrix.Plan(f)
		require.NoError(t, err, repro)
		require.Equal(t, []matrix.Cell{c.Cell}, cells, repro)
		got, err := o.Plan()
		require.NoError(t, err, repro)
		require.Len(t, got, 1, repro)
		require.Equal(t, c.Name(), got[0].Name(), repro)
	}
	require.True(t, insecure, "the plan holds the insecure cell")
	require.True(t, dns, "the plan holds DNS cells")
}

// shellWords splits a command as a POSIX shell does, for the quoting a
// repro uses: bare words, single-quoted strings, and a backslash escaping
// the next character outside them (how a quote is written inside).
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(cmd); i++ {
		ch := cmd[i]
		switch {
		case quoted && ch == '\'':
			quoted = false
		case quoted:
			w.WriteByte(ch)
		case ch == '\'':
			quoted, inWord = true, true
		case ch == '\\' && i+1 < len(cmd):
			i++
			w.WriteByte(cmd[i])
			inWord = true
		case ch == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	require.False(t, quoted, "unterminated quote in %s", cmd)
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// A report names Kubernetes, etcd and CoreDNS versions only for the
// providers that build their clusters here; an existing cluster's are not
// the embedded provider's.
func TestRunMetaRecordsOnlyOwnedVersions(t *testing.T) {
	for provider, owned := range map[string]bool{providerEmbedded: true, providerKind: true, providerExisting: false} {
		m := runMeta(manifests.Images{}, imageBinaries{}, provider)
		require.NotEmpty(t, m.Components["go"], provider)
		for _, c := range []string{"kubernetes", "etcd", "coredns"} {
			_, has := m.Components[c]
			require.Equal(t, owned, has, "%s: %s", provider, c)
		}
	}
}
