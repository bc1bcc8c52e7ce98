package nodeimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// libDirs are where the dynamic loader of a Debian amd64 root looks for
// libraries without a cache; the image layers put every library in the
// first.
var libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib"}

// loader is the amd64 dynamic loader's path, as binaries name it.
const loader = "/lib64/ld-linux-x86-64.so.2"

// resolveIn follows p (an absolute path inside root) through symlinks,
// absolute ones taken relative to root, and returns the path of the file it
// names inside root.
func resolveIn(root, p string) (string, error) {
	for range 40 {
		// Resolve the parent folders first (merged /usr: /lib → usr/lib).
		dir, base := path.Split(p)
		if dir != "/" {
			d, err := resolveIn(root, path.Clean(dir))
			if err != nil {
				return "", err
			}
			p = path.Join(d, base)
		}
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(filepath.Join(root, p))
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = path.Clean(target)
	}
	return "", fmt.Errorf("%s: too many symlinks in %s", p, root)
}

// sharedLibs returns the libraries (paths inside root, symlinks resolved)
// that the ELF files bins need, transitively, and the loader when any of
// them is dynamic. A static binary needs nothing. bins are host paths.
func sharedLibs(root string, bins ...string) (map[string]string, error) {
	need := map[string]string{} // name in the image → resolved path in root
	var queue []string
	add := func(f *elf.File, what string) error {
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				if _, ok := need[loader]; !ok {
					r, err := resolveIn(root, loader)
					if err != nil {
						return fmt.Errorf("%s needs the loader %s, which %s lacks: %w", what, loader, root, err)
					}
					need[loader] = r
				}
			}
		}
		for _, l := range libs {
			name := path.Join(libDirs[0], l)
			if _, ok := need[name]; ok {
				continue
			}
			var found string
			for _, d := range libDirs {
				if r, err := resolveIn(root, path.Join(d, l)); err == nil {
					found = r
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%s needs %s, which is in none of %v of %s", what, l, libDirs, root)
			}
			need[name] = found
			queue = append(queue, found)
		}
		return nil
	}
	for _, b := range bins {
		f, err := elf.Open(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b, err)
		}
		err = add(f, b)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		f, err := elf.Open(filepath.Join(root, r))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		err = add(f, r)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return need, nil
}

// isELF reports whether the file at p starts with the ELF magic.
func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4)
	_, err = f.Read(b)
	return err == nil && string(b) == "\x7fELF"
}

// dpkgFiles lists the files (not folders) that the packages pkgs installed
// in root, from dpkg's database there.
func dpkgFiles(root string, pkgs ...string) ([]string, error) {
	var files []string
	for _, p := range pkgs {
		b, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/info", p+".list"))
		if errors.Is(err, os.ErrNotExist) {
			b, err = os.ReadFile(filepath.Join(root, "var/lib/dpkg/info", p+":amd64.list"))
		}
		if err != nil {
			return nil, fmt.Errorf("package %s in %s: %w", p, root, err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == "" || strings.HasPrefix(l, "/usr/share/") {
				continue
			}
			if fi, err := os.Lstat(filepath.Join(root, l)); err == nil && !fi.IsDir() {
				files = append(files, l)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}
