package thresholdbench

import (
	"slices"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

// Row is the prefix of every row: FROST(Ed25519, SHA-512), any 2 of 3.
const Row = "frost-2of3-ed25519"

// InFlight are the loads of the online signing rows, as in the published
// DKLS23/CGGMP21 comparison.
var InFlight = []int{1, 50, 100, 200}

// Network places a coordinator and the three parties of a 2-of-3 key on
// the hosts of a netshape profile.
type Network struct {
	// Name is the profile's name, as rows carry it: "transatlantic".
	Name    string
	Profile *netshape.Profile
	// Coordinator is the coordinator's host; Parties[i] is participant
	// i+1's.
	Coordinator string
	Parties     [3]string
}

// Networks returns the placements the rows measure, in order of round
// trip time. In the SameZone, CrossEurope and Transatlantic profiles the
// coordinator and each party are on hosts of their own, so every party is
// the profile's whole round trip away from the coordinator: the case the
// goal "p50 ≤ RTT + 2 ms" is about. In Trio the parties are in Frankfurt,
// Gävle and Virginia and the coordinator is beside the Frankfurt party,
// in its zone; a sign then waits for the nearer of the two remote parties,
// Gävle, 32.5 ms away.
func Networks() []Network {
	var out []Network
	for _, p := range netshape.Profiles() {
		n := Network{Name: p.Name, Profile: p, Coordinator: "coordinator", Parties: [3]string{"party-1", "party-2", "party-3"}}
		if p.Name == netshape.Trio().Name {
			n.Coordinator = netshape.GermanyWestCentral
			n.Parties = [3]string{netshape.GermanyWestCentral, netshape.SwedenCentral, netshape.EastUS}
		}
		out = append(out, n)
	}
	return out
}

// NetworkNamed returns the placement of the profile called name.
func NetworkNamed(name string) (Network, bool) {
	for _, n := range Networks() {
		if n.Name == name {
			return n, true
		}
	}
	return Network{}, false
}

// Link returns the link from the coordinator to participant id (1 … 3),
// shaped at the coordinator's end.
func (n Network) Link(id int) netshape.Link {
	return n.Profile.Link(n.Coordinator, n.Parties[id-1])
}

// SignRTT is the round trip a sign cannot do without: a sign asks two
// parties at once and waits for both, so with the two nearest parties it
// takes the second-nearest party's round trip.
func (n Network) SignRTT() time.Duration {
	var rtts []time.Duration
	for _, h := range n.Parties {
		rtts = append(rtts, n.Profile.RTT(n.Coordinator, h))
	}
	slices.Sort(rtts)
	return rtts[1]
}
