package manifests

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/wire/reason"
)

//go:embed templates/*.yaml templates/*.tmpl
var templateFS embed.FS

// Object is a typed Kubernetes object (what Render returns).
type Object interface {
	metav1.Object
	runtime.Object
}

var templates = template.Must(template.New("manifests").Funcs(template.FuncMap{
	"quote":                 quote,
	"labels":                func(name, instance string) string { return quote(Labels(name, instance)) },
	"selector":              func(name, instance string) string { return quote(Selector(name, instance)) },
	"pylonLabels":           func(p Pylon) string { return quote(p.labels()) },
	"pylonEnv":              func(v Values, p Pylon) []envVar { return p.envVars(v.Flavor, v.Profile, v.Cluster) },
	"systemStoreDir":        func() string { return systemStoreDir },
	"workerTokenDir":        func() string { return workerTokenDir },
	"roleEnv":               func() string { return RoleEnv },
	"bundleKey":             func() string { return BundleKey },
	"registrationHeartbeat": func() string { return registrationHeartbeat },
	"dnsInterval":           func() string { return dnsInterval },
	"pylonBackoffMax":       func() string { return pylonBackoffMax },
	"list":                  func(v ...string) []string { return v },
	"bundlePath":            func() string { return BundlePath },
	"terminationPath":       func() string { return TerminationMessagePath },
	"terminationPathEnv":    func() string { return reason.TerminationPathEnv },
	"inferenceURL":          func() string { return inferenceURL },
	"gatewayName":           func() string { return GatewayName },
	"gatewayPort":           func() int { return GatewayPort },
	"gatewayEndpoint":       func(ns string) string { return GatewayEndpoint(ns) },
	"authTokenKey":          func() string { return AuthTokenKey },
	"gracePeriod":           func() int { return terminationGracePeriod },
	"hostnamesAnnotation":   func() string { return clusters.ExternalHostnamesAnnotation },
	"defectEnv":             func(v Values, role string) []envVar { return v.Defect.envVars(role) },
	"defectOn":              func(v Values, role string) bool { return len(v.Defect.envVars(role)) > 0 },
}).ParseFS(templateFS, "templates/*.yaml", "templates/*.tmpl"))

// strict decoding makes a misspelt field in a template an error.
var decoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Labels are the labels of a component's objects and pods.
func Labels(name, instance string) map[string]string {
	return map[string]string{
		NameLabel:                   name,
		InstanceLabel:               instance,
		"app.kubernetes.io/part-of": "nvcf",
		ManagedByLabel:              ManagedBy,
	}
}

// Selector is the pod selector of a component instance.
func Selector(name, instance string) map[string]string {
	return map[string]string{NameLabel: name, InstanceLabel: instance}
}

// Render renders the manifests of one cluster into typed objects, in apply
// order (namespace, RBAC, Services, workloads). v is validated first and
// its defaults filled.
func Render(v Values) ([]Object, error) {
	data, err := RenderYAML(v)
	if err != nil {
		return nil, err
	}
	return decode(data)
}

// RenderYAML renders the manifests of one cluster as a multi-document YAML
// stream, the form a user would `kubectl apply -f`.
func RenderYAML(v Values) ([]byte, error) {
	v, err := v.withDefaults()
	if err != nil {
		return nil, err
	}
	names := []string{"namespace.yaml"}
	if v.Stargate != nil {
		// The gateway before Stargate: NVCF's Stargate exits when its
		// --worker-auth-endpoint does not answer at start.
		names = append(names, "rbac.yaml", "services.yaml", "gateway.yaml", "stargate.yaml", "router.yaml", "ingress.yaml")
	}
	if v.Worker != nil {
		names = append(names, "pylon.yaml")
	}
	var out bytes.Buffer
	for _, n := range names {
		out.WriteString("---\n# Source: " + n + "\n")
		if err := templates.ExecuteTemplate(&out, n, v); err != nil {
			return nil, fmt.Errorf("render %s for cluster %q: %w", n, v.Cluster, err)
		}
		out.WriteString("\n")
	}
	return out.Bytes(), nil
}

// decode splits a multi-document YAML stream and decodes every document
// strictly with the client-go scheme. Documents holding only comments are
// skipped.
func decode(data []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read document %d: %w", i, err)
		}
		if isBlank(doc) {
			continue
		}
		o, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode document %d: %w\n%s", i, err, doc)
		}
		obj, ok := o.(Object)
		if !ok {
			return nil, fmt.Errorf("document %d: %T has no object metadata", i, o)
		}
		objs = append(objs, obj)
	}
}

func isBlank(doc []byte) bool {
	for _, l := range strings.Split(string(doc), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// quote renders v as JSON, which is valid YAML for any string, list or map.
func quote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("quote %#v: %v", v, err))
	}
	return string(b)
}
