package clusters

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRecordRoundTripAndNames(t *testing.T) {
	root := t.TempDir()
	type rec struct{ Name string }
	var got rec
	if err := ReadRecord(filepath.Join(root, "a"), &got); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing record: %v, want ErrNotFound", err)
	}
	for _, n := range []string{"a", "b", "not-recorded"} {
		if err := os.MkdirAll(filepath.Join(root, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b"} {
		if err := WriteRecord(filepath.Join(root, n), rec{n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ReadRecord(filepath.Join(root, "b"), &got); err != nil || got.Name != "b" {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	names, err := RecordedNames(root)
	if err != nil || len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Fatalf("names %v, %v; want [a b]", names, err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", RecordFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadRecord(filepath.Join(root, "a"), &got); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("a corrupt record: %v, want a parse error", err)
	}
	if names, err := RecordedNames(filepath.Join(root, "none")); err != nil || names != nil {
		t.Fatalf("missing root: %v, %v", names, err)
	}
}
