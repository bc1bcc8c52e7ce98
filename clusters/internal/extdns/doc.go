// Package extdns is the embedded provider's external DNS: a small
// authoritative server (github.com/miekg/dns) for the topology's domain,
// listening over UDP and TCP where the agent starts it (plan.ExternalDNS).
// It answers the external hostnames that the load-balancer controller
// registers (A records), says
// NXDOMAIN for any other name inside its zones and REFUSED for everything
// outside them: it never recurses, so nothing a test resolves leaves the
// machine. Each cluster's CoreDNS forwards the topology domain here.
//
// The fault injector acts on answers through SetFault: a name can be made to
// answer NXDOMAIN, SERVFAIL or a spoofed address, or to go unanswered, while
// the harness runs.
package extdns
