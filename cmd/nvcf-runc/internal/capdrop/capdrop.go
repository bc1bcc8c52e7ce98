// Package capdrop removes a capability from the OCI specs that runc is
// handed, editing only the capability lists and keeping every other field
// as it was.
package capdrop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SysResource is the capability this machine's bounding set lacks.
const SysResource = "CAP_SYS_RESOURCE"

// SpecFiles returns the spec files named by runc's arguments:
// <bundle>/config.json for create and run (--bundle or -b, default the
// working directory), the --process file for exec.
func SpecFiles(args []string) []string {
	var cmd, bundle, process string
	// Global options that take a value come first; their values are not
	// the command.
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func(name string) (string, bool) {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v, true
			}
			if a == name && i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		if v, ok := val("--bundle"); ok {
			bundle = v
			continue
		}
		if v, ok := val("-b"); ok {
			bundle = v
			continue
		}
		if v, ok := val("--process"); ok {
			process = v
			continue
		}
		if v, ok := val("-p"); ok {
			process = v
			continue
		}
		if _, ok := val("--root"); ok {
			continue
		}
		if _, ok := val("--log"); ok {
			continue
		}
		if _, ok := val("--log-format"); ok {
			continue
		}
		if cmd == "" && (a == "create" || a == "run" || a == "exec") {
			cmd = a
		}
	}
	switch cmd {
	case "create", "run":
		if bundle == "" {
			bundle = "."
		}
		return []string{filepath.Join(bundle, "config.json")}
	case "exec":
		if process != "" {
			return []string{process}
		}
	}
	return nil
}

// DropFromFile removes capability from the spec in path: a bundle's
// config.json (capabilities under .process) or a process spec (at the top).
func DropFromFile(path, capability string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read OCI spec: %w", err)
	}
	out, err := Drop(b, capability)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, fi.Mode().Perm())
}

// Drop returns spec without capability in any of its capability sets.
func Drop(spec []byte, capability string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("parse OCI spec: %w", err)
	}
	if raw, ok := doc["process"]; ok {
		var proc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &proc); err != nil {
			return nil, fmt.Errorf("parse .process: %w", err)
		}
		if err := dropIn(proc, capability); err != nil {
			return nil, err
		}
		var err error
		if doc["process"], err = json.Marshal(proc); err != nil {
			return nil, err
		}
	} else if err := dropIn(doc, capability); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

func dropIn(proc map[string]json.RawMessage, capability string) error {
	raw, ok := proc["capabilities"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var sets map[string][]string
	if err := json.Unmarshal(raw, &sets); err != nil {
		return fmt.Errorf("parse capabilities: %w", err)
	}
	for k, v := range sets {
		sets[k] = slices.DeleteFunc(v, func(c string) bool { return c == capability })
	}
	var err error
	proc["capabilities"], err = json.Marshal(sets)
	return err
}
