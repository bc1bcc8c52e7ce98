// Package kubelet is the embedded provider's process kubelet: one virtual
// node per Run, built on github.com/virtual-kubelet/virtual-kubelet (node
// controller with a lease, pod controller through its provider interface),
// that runs each pod scheduled to the node as local processes.
//
// A pod gets its own network namespace from podnet (so every container may
// bind 0.0.0.0:50071, as in a real cluster). Each container is one process,
// started as
//
//	ip netns exec <netns> /bin/sh -c <wrapper script> <mounts> <hostname> <dir> <argv>
//
// in a new UTS namespace. `ip netns exec` enters the pod's network
// namespace, creates a private mount namespace and bind-mounts
// /etc/netns/<netns>/{resolv.conf,hosts}; the wrapper (a fixed sh script
// using util-linux mount and hostname, so any binary embedding the kubelet
// can start containers) then bind-mounts the pod folder's volume directories at their mountPaths,
// sets the pod's hostname in a private UTS namespace and execs the image's
// binary. So /var/run/secrets/kubernetes.io/serviceaccount and
// /etc/nvcf/... resolve unchanged, each pod seeing its own contents. The
// empty directories that serve as mount points are created on the host.
//
// What a pod may ask for: the image (mapped to a local binary, see Images),
// command/args/env with $(VAR) expansion, the downward API (metadata.*,
// spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP),
// values and envFrom from ConfigMaps and Secrets, Secret, ConfigMap,
// emptyDir, hostPath, downwardAPI and projected volumes (service-account
// token from the TokenRequest API, kube-root-ca.crt, namespace), init
// containers, readiness/liveness/startup probes (HTTP GET, TCP, exec),
// restartPolicy with exponential back-off, terminationMessagePath (a fresh
// host file bind-mounted there per run, outside /dev, whose contents become
// the terminated state's message), graceful termination (SIGTERM,
// grace period, SIGKILL), container logs served to `kubectl logs` (with
// --previous, --tail, --limit-bytes, -f) and `kubectl exec` without a TTY.
// Not supported (the pod fails with a message saying so): HTTPS probes
// (the kubelet would skip certificate verification, which this project never
// does), gRPC probes, hostNetwork, resource limits (not enforced).
package kubelet
