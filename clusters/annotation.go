package clusters

import "strings"

// ExternalHostnamesAnnotation lists, comma-separated, the external hostnames
// of a LoadBalancer Service. Every provider publishes them in its external
// DNS, pointing at the load balancer's address; the manifests set it.
const ExternalHostnamesAnnotation = "conformance.nvcf/external-hostnames"

// ExternalHostnames returns the hostnames an object's annotations announce
// (ExternalHostnamesAnnotation), trimmed, without empty entries.
func ExternalHostnames(annotations map[string]string) []string {
	var hosts []string
	for _, h := range strings.Split(annotations[ExternalHostnamesAnnotation], ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}
