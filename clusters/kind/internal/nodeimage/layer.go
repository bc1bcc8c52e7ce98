package nodeimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"
)

// layer collects the entries of one image layer, written out as a tar in
// path order with every parent folder, fixed times and root ownership, so
// that the same inputs give the same bytes (and digest).
type layer struct {
	entries map[string]entry
}

type entry struct {
	typ    byte
	mode   int64
	link   string // symlink target
	src    string // host file to copy
	data   []byte // or these bytes
	source string // what put it here, for conflicts
}

func newLayer() *layer { return &layer{entries: map[string]entry{}} }

var epoch = time.Unix(0, 0)

func (l *layer) dirs(p string) {
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = entry{typ: tar.TypeDir, mode: 0o755}
		}
	}
}

// file copies the host file src to p (absolute, inside the image).
func (l *layer) file(p, src string, mode int64) {
	l.dirs(p)
	l.entries[p] = entry{typ: tar.TypeReg, mode: mode, src: src}
}

// content puts data at p.
func (l *layer) content(p string, data []byte, mode int64) {
	l.dirs(p)
	l.entries[p] = entry{typ: tar.TypeReg, mode: mode, data: data}
}

// symlink makes p point at target.
func (l *layer) symlink(p, target string) {
	l.dirs(p)
	l.entries[p] = entry{typ: tar.TypeSymlink, link: target, mode: 0o777}
}

// dir makes the folder p.
func (l *layer) dir(p string, mode int64) {
	l.dirs(p)
	l.entries[p] = entry{typ: tar.TypeDir, mode: mode}
}

// writeTo writes the layer as an uncompressed tar.
func (l *layer) writeTo(w io.Writer) error {
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		e := l.entries[n]
		h := &tar.Header{Name: n[1:], Typeflag: e.typ, Mode: e.mode, ModTime: epoch, Linkname: e.link, Format: tar.FormatPAX}
		if e.typ == tar.TypeDir {
			h.Name += "/"
		}
		var body io.Reader
		if e.typ == tar.TypeReg {
			if e.src != "" {
				data, err := os.ReadFile(e.src)
				if err != nil {
					return err
				}
				e.data = data
			}
			h.Size = int64(len(e.data))
			body = bytes.NewReader(e.data)
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layer entry %s: %w", n, err)
		}
		if body != nil {
			if _, err := io.Copy(tw, body); err != nil {
				return fmt.Errorf("layer entry %s: %w", n, err)
			}
		}
	}
	return tw.Close()
}

// writeFile writes the layer's tar to p.
func (l *layer) writeFile(p string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := l.writeTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
