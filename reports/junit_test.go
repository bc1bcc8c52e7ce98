package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// gotestsumJUnit is shaped like gotestsum's report of the scenarios suite.
const gotestsumJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" failures="1" errors="0" time="12.000">
	<testsuite tests="6" failures="1" time="12.000" name="github.com/nvcf/conformance/scenarios" timestamp="2025-01-01T00:00:00Z">
		<properties>
			<property name="go.version" value="go1.26"></property>
		</properties>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios/tls/wrong-root[workload=deployment,trust=bundle]/positive_control_tls/verified-watch_passes" time="1.000"></testcase>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios/tls/wrong-root[workload=deployment,trust=bundle]" time="2.000"></testcase>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios/tls/wrong-root/with-control-config[workload=deployment,trust=bundle]" time="3.000">
			<failure message="Failed" type="">still refused &amp; &lt;why&gt;</failure>
		</testcase>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios/quic/bad-token[workload=mixed,trust=system]" time="1.000">
			<properties>
				<property name="owner" value="quic"></property>
			</properties>
		</testcase>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios/authority/missing[workload=mixed,trust=system]" time="1.000"/>
		<testcase classname="github.com/nvcf/conformance/scenarios" name="TestScenarios" time="12.000"></testcase>
	</testsuite>
</testsuites>
`

type junitCase struct {
	Name       string `xml:"name,attr"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Failure *struct {
		Contents string `xml:",chardata"`
	} `xml:"failure"`
}

type junitReport struct {
	Suites []struct {
		Properties []struct {
			Name string `xml:"name,attr"`
		} `xml:"properties>property"`
		Cases []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestAnnotateJUnit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	require.NoError(t, os.WriteFile(path, []byte(gotestsumJUnit), 0o644))
	results := sample(dir)
	results[0].Description = `a client trusting only another root refuses the ingress "<&>"`
	require.NoError(t, AnnotateJUnit(path, results))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r junitReport
	require.NoError(t, xml.Unmarshal(data, &r), string(data))
	require.Len(t, r.Suites, 1)
	require.Len(t, r.Suites[0].Properties, 1, "the suite's own properties are kept, and get no description")
	described := map[string][]string{}
	for _, c := range r.Suites[0].Cases {
		for _, p := range c.Properties {
			described[c.Name] = append(described[c.Name], p.Name+"="+p.Value)
		}
	}
	wrongRoot := DescriptionProperty + `=a client trusting only another root refuses the ingress "<&>"`
	require.Equal(t, map[string][]string{
		"TestScenarios/tls/wrong-root[workload=deployment,trust=bundle]/positive_control_tls/verified-watch_passes": {wrongRoot},
		"TestScenarios/tls/wrong-root[workload=deployment,trust=bundle]":                                            {wrongRoot},
		"TestScenarios/tls/wrong-root/with-control-config[workload=deployment,trust=bundle]":                        {DescriptionProperty + "=what tls/wrong-root shows"},
		"TestScenarios/quic/bad-token[workload=mixed,trust=system]":                                                 {DescriptionProperty + "=what quic/bad-token shows", "owner=quic"},
		"TestScenarios/authority/missing[workload=mixed,trust=system]":                                              {DescriptionProperty + "=what authority/missing shows"},
	}, described, string(data))
	failed := r.Suites[0].Cases[2]
	require.NotNil(t, failed.Failure)
	require.Equal(t, "still refused & <why>", failed.Failure.Contents)

	require.NoError(t, AnnotateJUnit(filepath.Join(dir, "missing.xml"), results), "no report, nothing to annotate")
	require.NoError(t, os.WriteFile(path, []byte("<testsuites><testcase"), 0o644))
	require.Error(t, AnnotateJUnit(path, results))
}
