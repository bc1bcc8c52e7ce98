package capdrop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpecFiles(t *testing.T) {
	require.Equal(t, []string{"/b/config.json"}, SpecFiles([]string{"--root", "/r", "--log", "x", "create", "--bundle", "/b", "id"}))
	require.Equal(t, []string{"/b/config.json"}, SpecFiles([]string{"run", "-b=/b", "id"}))
	require.Equal(t, []string{"config.json"}, SpecFiles([]string{"create", "id"}))
	require.Equal(t, []string{"/p.json"}, SpecFiles([]string{"--root", "/r", "exec", "--process", "/p.json", "--detach", "id"}))
	require.Empty(t, SpecFiles([]string{"start", "id"}))
	require.Empty(t, SpecFiles([]string{"--root", "run", "delete", "id"}), "a root folder named like a command is not one")
}

func TestDropFromBundleAndProcessSpecs(t *testing.T) {
	bundle := `{"ociVersion":"1.0.2","process":{"args":["/sbin/init"],"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"],"permitted":["CAP_SYS_RESOURCE","CAP_NET_ADMIN"]}},"root":{"path":"rootfs"}}`
	out, err := Drop([]byte(bundle), SysResource)
	require.NoError(t, err)
	var doc struct {
		OCIVersion string `json:"ociVersion"`
		Process    struct {
			Args []string            `json:"args"`
			Caps map[string][]string `json:"capabilities"`
		} `json:"process"`
		Root struct{ Path string } `json:"root"`
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Equal(t, map[string][]string{"bounding": {"CAP_CHOWN"}, "effective": {}, "permitted": {"CAP_NET_ADMIN"}}, doc.Process.Caps)
	require.Equal(t, []string{"/sbin/init"}, doc.Process.Args, "other fields stay")
	require.Equal(t, "rootfs", doc.Root.Path)

	dir := t.TempDir()
	p := filepath.Join(dir, "process.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"args":["sh"],"capabilities":{"ambient":["CAP_SYS_RESOURCE"]}}`), 0o600))
	require.NoError(t, DropFromFile(p, SysResource))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.JSONEq(t, `{"args":["sh"],"capabilities":{"ambient":[]}}`, string(b))

	_, err = Drop([]byte(`{"process":`), SysResource)
	require.ErrorContains(t, err, "parse OCI spec")
}
