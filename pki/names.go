package pki

import "strings"

// sampleLabel replaces the '*' of a wildcard name to make the concrete name
// a wildcard certificate is verified for (e.g. the identity of pod stargate-0).
const sampleLabel = "stargate-0"

// concrete turns "*.zone" into "stargate-0.zone"; other names are returned as is.
func concrete(name string) string {
	if strings.HasPrefix(name, "*.") {
		return sampleLabel + name[1:]
	}
	return name
}

// covers reports whether the certificate name pattern (maybe a wildcard)
// matches the concrete host, with the one-label wildcard rule of RFC 6125.
func covers(pattern, host string) bool {
	if pattern == host {
		return true
	}
	if !strings.HasPrefix(pattern, "*.") {
		return false
	}
	i := strings.IndexByte(host, '.')
	return i > 0 && host[i:] == pattern[1:]
}

// wrongHost picks a name close to verify that none of names covers: the
// first label replaced by "wrong-host", else "wrong-host." prepended, else
// a name under the reserved .invalid zone.
func wrongHost(verify string, names []string) string {
	candidates := []string{"wrong-host." + verify, "wrong-host.invalid"}
	if i := strings.IndexByte(verify, '.'); i > 0 {
		candidates = append([]string{"wrong-host" + verify[i:]}, candidates...)
	}
	for _, c := range candidates {
		hit := false
		for _, n := range names {
			hit = hit || covers(n, c)
		}
		if !hit {
			return c
		}
	}
	return candidates[len(candidates)-1]
}
