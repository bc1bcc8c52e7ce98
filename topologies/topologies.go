// Package topologies holds the committed topologies, embedded in the harness
// so that a bin/ folder copied anywhere runs them without the source tree.
package topologies

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/nvcf/conformance/model/topology"
)

//go:embed *.yaml
var files embed.FS

// Names lists the embedded topologies ("default", …).
func Names() []string {
	entries, _ := fs.ReadDir(files, ".") // the embedded root always reads
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Load loads a topology by file path, or by the name of an embedded one when
// no such file exists: "default" and "topologies/default.yaml" both give the
// default topology, from the working folder's copy if there is one.
func Load(ref string) (*topology.Topology, error) {
	if _, err := os.Stat(ref); err == nil {
		return topology.Load(ref)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("topology %s: %w", ref, err)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(ref, "topologies/"), ".yaml")
	data, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("topology %q: no such file, and no embedded topology of that name (embedded: %s)", ref, strings.Join(Names(), ", "))
	}
	t, err := topology.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("embedded topology %s: %w", name, err)
	}
	return t, nil
}
