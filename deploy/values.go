package deploy

import (
	"fmt"
	"net"
	"strconv"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
)

// GRPCURL is the external gRPC URL of a stargate cluster's ingress:
// "https://<GRPCHost>:50071".
func GRPCURL(t *topology.Topology, cluster string) string {
	return "https://" + net.JoinHostPort(t.GRPCHost(cluster), strconv.Itoa(manifests.GRPCPort))
}

// QUICAddr is the external UDP address of a stargate cluster's QUIC relay:
// "<QUICHost>:50072".
func QUICAddr(t *topology.Topology, cluster string) string {
	return net.JoinHostPort(t.QUICHost(cluster), strconv.Itoa(manifests.QUICPort))
}

// HTTPAddr is the external address of a stargate cluster's Stargate HTTP:
// "<HTTPHost>:8000".
func HTTPAddr(t *topology.Topology, cluster string) string {
	return net.JoinHostPort(t.HTTPHost(cluster), strconv.Itoa(manifests.HTTPPort))
}

// BootstrapCluster is the stargate cluster Pylon bootstraps from: the first
// one that watches remote regions (so Pylon learns the others through
// watch_stargate_urls), else the first stargate cluster.
func BootstrapCluster(t *topology.Topology) (string, error) {
	sg := t.ByRole(topology.RoleStargate)
	if len(sg) == 0 {
		return "", fmt.Errorf("topology %q has no stargate cluster for Pylon to bootstrap from", t.Name)
	}
	for _, c := range sg {
		if c.Stargate != nil && len(c.Stargate.RemoteWatch) > 0 {
			return c.Name, nil
		}
	}
	return sg[0].Name, nil
}

// values computes the chart values of one cluster for the options' cell.
func (d *Deployer) values(c topology.Cluster) (manifests.Values, error) {
	o := d.opts
	v := manifests.Values{
		Namespace: o.Namespace,
		Cluster:   c.Name,
		Profile:   string(o.Cell.Profile),
		Images:    o.Images,
		Flavor:    o.Flavor,
		Build:     o.Build,
		Defect:    o.Defect,
	}
	t := o.Topology
	switch c.Role {
	case topology.RoleStargate:
		i := stargateIndex(t, c.Name)
		s := &manifests.Stargate{
			Kind:              o.Cell.KindFor(i),
			Replicas:          c.Stargate.Replicas,
			Discovery:         o.Cell.Discovery,
			IdentityTemplate:  t.IdentityTemplate(c.Name),
			GRPCHost:          t.GRPCHost(c.Name),
			QUICHost:          t.QUICHost(c.Name),
			HTTPHost:          t.HTTPHost(c.Name),
			GRPCPylonDialAddr: GRPCURL(t, c.Name),
			QUICPylonDialAddr: QUICAddr(t, c.Name),
			AuthSecret:        manifests.AuthSecret,
			ClientCA:          o.ClientTLS,
		}
		for _, r := range c.Stargate.RemoteWatch {
			s.RemoteWatchURLs = append(s.RemoteWatchURLs, GRPCURL(t, r))
		}
		v.Stargate = s
	case topology.RoleWorkers:
		base, err := d.basePylon()
		if err != nil {
			return v, err
		}
		v.Worker = &manifests.Worker{Pylons: []manifests.Pylon{base}}
	default:
		return v, fmt.Errorf("cluster %q: role %q has no manifests", c.Name, c.Role)
	}
	return v, nil
}

// basePylon is the Pylon of the cell: bootstrap at BootstrapCluster, trust
// source from the cell's trust axis.
func (d *Deployer) basePylon() (manifests.Pylon, error) {
	b, err := BootstrapCluster(d.opts.Topology)
	if err != nil {
		return manifests.Pylon{}, err
	}
	p := manifests.Pylon{
		Name:         manifests.PylonName,
		BootstrapURL: GRPCURL(d.opts.Topology, b),
		Trust:        d.opts.Cell.Trust,
		AuthSecret:   manifests.AuthSecret,
	}
	if d.opts.ClientTLS {
		p.ClientTLSSecret = manifests.ClientTLSSecret
	}
	return p, nil
}

// stargateIndex is the position of cluster among the stargate clusters.
func stargateIndex(t *topology.Topology, cluster string) int {
	for i, c := range t.ByRole(topology.RoleStargate) {
		if c.Name == cluster {
			return i
		}
	}
	return -1
}
