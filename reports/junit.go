package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DescriptionProperty is the name of the JUnit property that carries a
// case's description (its scenario's one-line summary).
const DescriptionProperty = "description"

// AnnotateJUnit adds to every testcase of the JUnit report at path (as
// gotestsum writes it) that belongs to one of results, the case's
// description as a property: `<properties><property name="description"
// value="…"/></properties>`. A testcase belongs to a case when its name is
// the case's name under the top-level test ("TestScenarios/<case>") or one
// of its steps ("TestScenarios/<case>/<step>"). Everything else in the
// report is kept. A missing report (the suite never ran) is left missing.
func AnnotateJUnit(path string, results []CaseResult) error {
	in, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read JUnit report: %w", err)
	}
	descriptions := map[string]string{}
	for _, r := range results {
		if r.Description != "" {
			descriptions[r.Name] = r.Description
		}
	}
	out, err := annotate(in, descriptions)
	if err != nil {
		return fmt.Errorf("annotate JUnit report %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".junit-*.xml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// annotate adds a description property to each testcase of the XML
// document in that descriptionOf finds one for: into the testcase's own
// properties when they are its first child, else in a new properties
// element as its first child. Every other byte of in is kept.
func annotate(in []byte, descriptions map[string]string) ([]byte, error) {
	dec := xml.NewDecoder(bytes.NewReader(in))
	var (
		edits   []edit
		pending string // the description of the open testcase, not yet placed
		at      int64  // where it goes when the testcase has no properties
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		end := dec.InputOffset()
		if pending != "" {
			if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(cd)) == 0 {
				continue
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "properties" {
				edits = append(edits, intoElement(in, end, "properties", property(pending)))
			} else {
				edits = append(edits, edit{at: at, text: "<properties>" + property(pending) + "</properties>"})
			}
			pending = ""
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "testcase" {
			continue
		}
		d := descriptionOf(descriptions, attr(se, "name"))
		switch {
		case d == "":
		case selfClosing(in, end):
			edits = append(edits, intoElement(in, end, "testcase", "<properties>"+property(d)+"</properties>"))
		default:
			pending, at = d, end
		}
	}
	var out bytes.Buffer
	last := int64(0)
	for _, e := range edits {
		out.Write(in[last:e.at])
		out.WriteString(e.text)
		last = e.at + e.cut
	}
	out.Write(in[last:])
	return out.Bytes(), nil
}

// edit replaces cut bytes at offset at with text.
type edit struct {
	at, cut int64
	text    string
}

// selfClosing reports whether the start tag ending at end closes itself.
func selfClosing(in []byte, end int64) bool {
	return end >= 2 && string(in[end-2:end]) == "/>"
}

// intoElement places text as the first child of the element called name
// whose start tag ends at end.
func intoElement(in []byte, end int64, name, text string) edit {
	if selfClosing(in, end) {
		return edit{at: end - 2, cut: 2, text: ">" + text + "</" + name + ">"}
	}
	return edit{at: end, text: text}
}

// property renders the description property.
func property(description string) string {
	var v bytes.Buffer
	_ = xml.EscapeText(&v, []byte(description))
	return `<property name="` + DescriptionProperty + `" value="` + v.String() + `"></property>`
}

// descriptionOf finds the description of the case a test belongs to: the
// test's name without its top-level test, or the longest prefix of it
// that ends before a '/' (a step of the case).
func descriptionOf(descriptions map[string]string, test string) string {
	_, rest, ok := strings.Cut(test, "/")
	if !ok {
		return ""
	}
	for name := rest; ; {
		if d, ok := descriptions[name]; ok {
			return d
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return ""
		}
		name = name[:i]
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
