package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/topologies"
)

// runFlags are the flags `run` and `bench` share: the topology, the
// artifacts, the matrix filters, images and logging.
type runFlags struct {
	topology, images, flavor string
	real, proof              string
	imageMap                 imageBinaries
	verbose                  *bool
	provider                 providerFlags
}

// matrixFlags registers the shared flags on fs, filling o where it can.
func matrixFlags(fs *flag.FlagSet, o *harnessrun.Options) *runFlags {
	f := &runFlags{imageMap: imageBinaries{}}
	fs.StringVar(&f.topology, "topology", "topologies/default.yaml", "topology file, or the name of an embedded one (default)")
	fs.StringVar(&o.Artifacts, "artifacts", "_artifacts", "folder for junit.xml, summary.md and per-case evidence")
	fs.StringVar(&o.Run, "run", "", "regular expression selecting scenario IDs (see: harness list)")
	fs.StringVar(&o.Layers, "layer", "", "comma-separated layers to run (tls, authority, discovery, watch, registration, quic, invocation, resilience)")
	fs.StringVar(&o.Labels, "label", "", "comma-separated labels; a scenario runs when it carries one of them")
	cellFlags(fs, o, "")
	fs.BoolVar(&o.Keep, "keep", false, "leave the clusters up after the run (for another run or a look after a failure)")
	fs.Float64Var(&o.TimeScale, "time-scale", 1, "multiply every scenario deadline (slow machines raise it)")
	fs.IntVar(&o.Parallel, "parallel", harnessrun.DefaultParallel, "how many isolated cases of a cell (probes only) run at the same time; 1 runs every case one after another")
	fs.IntVar(&o.Environments, "environments", 0, "how many environments of the topology run parts of the plan at the same time (0: "+strconv.Itoa(harnessrun.DefaultEnvironments)+" with the embedded provider, 1 with the others, which run one)")
	fs.StringVar(&f.images, "images", "", "replace reference images: component=image,… (components: stargate, router, ingress, pylon, echo, worker-auth-gateway)")
	fs.Var(f.imageMap, "image-binary", imageBinaryUsage)
	fs.StringVar(&f.flavor, "flavor", "", flavorUsage)
	fs.StringVar(&f.real, "real", "", "comma-separated roles played by NVCF's real components (stargate, router, pylon): they take the nvcf flavor and, unless --images names one, the image nvcf/<binary>, which the embedded provider runs from --nvcf-bin-dir; a real Stargate's server side is proven from its /metrics and ListModels, not /status")
	fs.StringVar(&f.proof, "proof", "", "source of the server-side proofs: status or metrics (default: status for a reference Stargate, metrics for a real one)")
	fs.StringVar(&o.NVCFBinDir, "nvcf-bin-dir", os.Getenv(nvcfbuild.BinDirEnv), nvcfBinDirUsage)
	f.verbose = fs.Bool("v", false, "log progress at debug level")
	f.provider.register(fs)
	return f
}

// cellFlags registers the matrix filters --workload, --trust, --discovery
// and --profile on fs, into o; their help texts list the axes' values from
// package matrix. note begins every help text.
func cellFlags(fs *flag.FlagSet, o *harnessrun.Options, note string) {
	fs.StringVar(&o.Workloads, "workload", "", note+"comma-separated workload kinds ("+matrix.Join(matrix.Workloads)+")")
	fs.StringVar(&o.Trusts, "trust", "", note+"comma-separated trust sources ("+matrix.Join(matrix.Trusts)+")")
	fs.StringVar(&o.Discoveries, "discovery", "", note+"comma-separated peer-discovery modes ("+matrix.Join(matrix.Discoveries)+")")
	fs.StringVar(&o.Profiles, "profile", "", note+"comma-separated security profiles ("+matrix.Join(matrix.Profiles)+"); the insecure profile has one cell, "+matrix.InsecureCell.Name())
}

// prepare completes o after parsing: images, the topology, the preflight
// checks (before anything long: root, tools, ports, disk), the logger and
// the provider --provider names.
func (f *runFlags) prepare(o *harnessrun.Options, stdout, stderr io.Writer) error {
	if err := f.provider.check(); err != nil {
		return err
	}
	if o.Parallel < 1 {
		return fmt.Errorf("--parallel %d: want 1 or more (1 runs every case one after another)", o.Parallel)
	}
	if _, err := o.Plan(); err != nil { // a mistyped filter is named before the preflight checks
		return err
	}
	switch {
	case o.Environments < 0:
		return fmt.Errorf("--environments %d: want 1 or more, or 0 for the provider's default", o.Environments)
	case o.Environments == 0 && f.provider.name == providerEmbedded:
		o.Environments = harnessrun.DefaultEnvironments
	case o.Environments == 0:
		o.Environments = 1
	case o.Environments > 1 && f.provider.name != providerEmbedded:
		return fmt.Errorf("--environments %d: the %s provider runs one environment of a topology; leave --environments out, or use the embedded provider", o.Environments, f.provider.name)
	}
	var err error
	if o.Images, err = parseImages(f.images); err != nil {
		return err
	}
	if o.Flavor, err = manifests.ParseFlavor(f.flavor); err != nil {
		return fmt.Errorf("--flavor: %w", err)
	}
	if o.Real, err = catalog.ParseReal(f.real); err != nil {
		return fmt.Errorf("--real: %w", err)
	}
	if o.Proof, err = catalog.ParseProofSource(f.proof); err != nil {
		return fmt.Errorf("--proof: %w", err)
	}
	if err := f.realComponents(o); err != nil {
		return err
	}
	if o.NVCFBinDir != "" && o.Flavor != manifests.FlavorNVCF {
		o.NVCFBinDir = "" // the reference flavor runs the reference roles, whatever the binaries take
	}
	if o.Topology, err = topologies.Load(f.topology); err != nil {
		return err
	}
	o.TopologyRef = f.topology
	spec := clusters.SpecOf(o.Topology)
	artifacts := local.Disk{Dir: o.Artifacts, Min: minArtifactSpace, Why: "the run's reports, logs and evidence", Hint: "pass --artifacts on a larger filesystem"}
	if err := f.provider.preflight(&spec, artifacts); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *f.verbose {
		level = slog.LevelDebug
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.Stdout = stdout
	o.ProviderName = f.provider.name
	o.ProviderArgs = append(f.provider.args(), f.imageMap.args()...)
	o.StateDir = f.provider.stateDir(o.Topology.Name)
	o.Provider, err = f.provider.provider(f.imageMap)
	return err
}

// realBinaries names the binary of NVCF's build that plays each real role.
var realBinaries = map[string]string{"stargate": "stargate", "router": "stargate-k8s-router", "pylon": "pylon"}

// realComponents completes --real: NVCF's components take the nvcf
// flavor, an unset image of a real role becomes nvcf/<binary>, and on the
// embedded provider that image runs the binary of the same name from
// --nvcf-bin-dir, unless --image-binary names another. So
// `--real stargate,router --nvcf-bin-dir DIR` is a whole real run.
func (f *runFlags) realComponents(o *harnessrun.Options) error {
	if len(o.Real) == 0 {
		return nil
	}
	switch {
	case f.flavor == "":
		o.Flavor = manifests.FlavorNVCF
	case o.Flavor != manifests.FlavorNVCF:
		return fmt.Errorf("--real %s runs NVCF's components, which take NVCF's flags: leave --flavor out or pass --flavor nvcf", strings.Join(o.Real, ","))
	}
	for _, role := range o.Real {
		bin := realBinaries[role]
		img := o.Images.Field(role)
		if *img == "" {
			*img = "nvcf/" + bin
		}
		if f.provider.name != providerEmbedded {
			continue // the clusters pull the image
		}
		repo := *img
		if i := strings.LastIndexAny(repo, "/"); i >= 0 {
			repo = repo[i+1:]
		}
		if _, ok := f.imageMap[*img]; ok {
			continue
		}
		if _, ok := f.imageMap[repo]; ok {
			continue
		}
		if o.NVCFBinDir == "" {
			return fmt.Errorf("--real %s on the embedded provider runs NVCF's %s binary: name its folder with --nvcf-bin-dir DIR (or $%s), or pass --image-binary %s=PATH", role, bin, nvcfbuild.BinDirEnv, repo)
		}
		path := filepath.Join(o.NVCFBinDir, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			return fmt.Errorf("--real %s: --nvcf-bin-dir %s holds no %s binary (%v); build NVCF's %s there, or pass --image-binary %s=PATH", role, o.NVCFBinDir, bin, err, bin, repo)
		}
		f.imageMap[repo] = path
	}
	return nil
}
