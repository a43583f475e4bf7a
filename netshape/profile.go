package netshape

import (
	"maps"
	"net"
	"slices"
	"time"
)

// Round trip times of the profiles. Each profile splits its RTT evenly
// between the two directions. The sources are named on the profile
// functions.
const (
	SameZoneRTT      = 500 * time.Microsecond
	CrossEuropeRTT   = 25 * time.Millisecond
	TransatlanticRTT = 90 * time.Millisecond
)

// The hosts of the Trio profile, named as Azure names the regions its
// figures come from.
const (
	GermanyWestCentral = "germanywestcentral" // Frankfurt
	SwedenCentral      = "swedencentral"      // Gävle
	EastUS             = "eastus"             // Virginia
)

// Pair names the direction from one host to another.
type Pair struct{ From, To string }

// Profile is a network between named hosts: the Path each direction
// between two hosts takes. Host names are the caller's; a profile with
// Paths uses the names in them for the hosts it places, and Default for any
// other pair.
//
// The profiles this package makes have neither jitter, nor a bandwidth
// cap, nor loss: With adds them. Their delays come from published averages
// and 95th percentiles of round trip times between cloud regions, which
// are steady, so no jitter is the closer default; the sources are cited
// on each constructor.
//
// A Profile is not safe to modify while it is in use; its methods that do
// not modify it are safe for concurrent use.
type Profile struct {
	// Name is short and fit for a benchmark name: "transatlantic".
	Name string
	// Local is the path between two connections of one host name: two
	// machines in one zone, in this package's profiles.
	Local Path
	// Default is the path between two distinct hosts that Paths lacks.
	Default Path
	// Paths holds one-way paths between hosts. A direction missing from
	// it takes its reverse's path, if that is present.
	Paths map[Pair]Path
}

// Path returns the path from one host to another.
func (p *Profile) Path(from, to string) Path {
	if from == to {
		return p.Local
	}
	if path, ok := p.Paths[Pair{from, to}]; ok {
		return path
	}
	if path, ok := p.Paths[Pair{to, from}]; ok {
		return path
	}
	return p.Default
}

// Link returns the link for a connection between two hosts, shaped at the
// from end: Out is the path from it, In the path to it.
func (p *Profile) Link(from, to string) Link {
	return Link{Out: p.Path(from, to), In: p.Path(to, from)}
}

// RTT returns the round trip time between two hosts, without jitter, loss
// or queuing.
func (p *Profile) RTT(a, b string) time.Duration { return p.Link(a, b).RTT() }

// Hosts returns, sorted, the host names that Paths mentions.
func (p *Profile) Hosts() []string {
	set := make(map[string]bool)
	for pair := range p.Paths {
		set[pair.From], set[pair.To] = true, true
	}
	return slices.Sorted(maps.Keys(set))
}

// Dialer returns a DialFunc for host from to reach host to, shaping each
// connection at the dialing end with p.Link(from, to) (see the package
// Dialer). The listening end must not be shaped as well.
func (p *Profile) Dialer(from, to string, d *net.Dialer) DialFunc {
	return Dialer(p.Link(from, to), d)
}

// Listener returns ln shaping each connection it accepts with the link
// from host to peer, for a listener whose clients are all on peer and not
// shaped themselves.
func (p *Profile) Listener(ln net.Listener, host, peer string) (*Listener, error) {
	return NewListener(ln, p.Link(host, peer))
}

// With returns a copy of p in which f has changed every path, Local
// included: to add a bandwidth cap, jitter or loss to a profile.
func (p *Profile) With(f func(Path) Path) *Profile {
	q := &Profile{Name: p.Name, Local: f(p.Local), Default: f(p.Default)}
	if p.Paths != nil {
		q.Paths = make(map[Pair]Path, len(p.Paths))
		for pair, path := range p.Paths {
			q.Paths[pair] = f(path)
		}
	}
	return q
}

// symmetric returns the path of half the round trip time rtt.
func symmetric(rtt time.Duration) Path { return Path{Delay: rtt / 2} }

// SameZone returns the profile of hosts in one cloud zone: a round trip
// time of SameZoneRTT, 0.5 ms, between any two hosts. IBM Cloud's VPC
// network latency page (cloud.ibm.com/docs/vpc?topic=vpc-network-latency,
// 16 Aug to 14 Sep 2025) gives an average of 0.1 ms within one zone and 1.6
// to 2.9 ms between the zones of Dallas; Google Cloud's "Best practices for
// Compute Engine regions selection" (cloud.google.com/solutions/
// best-practices-compute-engine-region-selection) puts round trips within
// a region under 1 ms at the 95th percentile. 0.5 ms is between virtual
// machines in one zone, allowing for their virtual network.
func SameZone() *Profile {
	return &Profile{Name: "same-zone", Local: symmetric(SameZoneRTT), Default: symmetric(SameZoneRTT)}
}

// CrossEurope returns the profile of hosts in two European cloud regions a
// few hundred kilometres apart: a round trip time of CrossEuropeRTT, 25 ms,
// between any two distinct hosts, and SameZoneRTT within one host name.
//
// Microsoft's "Azure network round-trip latency statistics"
// (learn.microsoft.com/azure/networking/azure-network-latency; 95th
// percentile over the 30 days to 30 July 2026) gives West Europe
// (Amsterdam) to Norway East 24 and 25 ms (one figure each way), Germany
// West Central (Frankfurt) to Poland Central 26 ms, and UK South to Spain
// Central 26 and 27 ms; IBM Cloud's VPC network latency page gives London
// to Madrid 27 ms and London to Frankfurt 13 ms (average, 16 Aug to 14 Sep
// 2025).
func CrossEurope() *Profile {
	return &Profile{Name: "cross-europe", Local: symmetric(SameZoneRTT), Default: symmetric(CrossEuropeRTT)}
}

// Transatlantic returns the profile of hosts on the two sides of the North
// Atlantic: a round trip time of TransatlanticRTT, 90 ms, between any two
// distinct hosts, and SameZoneRTT within one host name.
//
// Microsoft's "Azure network round-trip latency statistics" (95th
// percentile over the 30 days to 30 July 2026) gives West Europe
// (Amsterdam) to East US (Virginia) 89 and 91 ms, UK South (London) to
// East US 80 ms, and Germany West Central (Frankfurt) to East US 97 ms; IBM
// Cloud's VPC network latency page gives Frankfurt to Washington DC 86 ms
// (average, 16 Aug to 14 Sep 2025; 91 ms a year before) and London to
// Washington DC 75 and 76 ms.
func Transatlantic() *Profile {
	return &Profile{Name: "transatlantic", Local: symmetric(SameZoneRTT), Default: symmetric(TransatlanticRTT)}
}

// Trio returns the profile of three cloud regions, one host in each:
// GermanyWestCentral (Frankfurt), SwedenCentral (Gävle) and EastUS
// (Virginia). Its round trip times are the means of the two directions'
// figures in Microsoft's "Azure network round-trip latency statistics"
// (learn.microsoft.com/azure/networking/azure-network-latency; 95th
// percentile over the 30 days to 30 July 2026):
//
//	GermanyWestCentral – SwedenCentral   31 and 34 ms: 32.5 ms
//	GermanyWestCentral – EastUS          97 and 97 ms: 97 ms
//	SwedenCentral      – EastUS         108 and 110 ms: 109 ms
//
// These regions stand in for Google Cloud's europe-west3 (Frankfurt),
// europe-north1 (Hamina, Finland) and us-east1 (South Carolina), which
// Google reports only in its console's Performance Dashboard: Hamina and
// South Carolina are further out than Gävle and Virginia, so that trio's
// round trips are likely a few milliseconds longer. Any other pair of
// distinct hosts is TransatlanticRTT apart, and one host name is
// SameZoneRTT from itself.
func Trio() *Profile {
	return &Profile{
		Name:    "trio",
		Local:   symmetric(SameZoneRTT),
		Default: symmetric(TransatlanticRTT),
		Paths: map[Pair]Path{
			{GermanyWestCentral, SwedenCentral}: symmetric(32500 * time.Microsecond),
			{GermanyWestCentral, EastUS}:        symmetric(97 * time.Millisecond),
			{SwedenCentral, EastUS}:             symmetric(109 * time.Millisecond),
		},
	}
}

// Profiles returns a new copy of each profile of this package, in order
// of round trip time: SameZone, CrossEurope, Transatlantic and Trio.
func Profiles() []*Profile {
	return []*Profile{SameZone(), CrossEurope(), Transatlantic(), Trio()}
}
