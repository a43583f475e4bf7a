package netshape

import (
	"slices"
	"testing"
	"time"
)

func TestProfileRTTs(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		p    *Profile
		a, b string
		want time.Duration
	}{
		{SameZone(), "a", "b", ms(0.5)},
		{SameZone(), "a", "a", ms(0.5)},
		{CrossEurope(), "a", "b", ms(25)},
		{CrossEurope(), "a", "a", ms(0.5)},
		{Transatlantic(), "eu", "us", ms(90)},
		{Transatlantic(), "us", "us", ms(0.5)},
		{Trio(), GermanyWestCentral, SwedenCentral, ms(32.5)},
		{Trio(), SwedenCentral, GermanyWestCentral, ms(32.5)},
		{Trio(), GermanyWestCentral, EastUS, ms(97)},
		{Trio(), EastUS, SwedenCentral, ms(109)},
		{Trio(), EastUS, EastUS, ms(0.5)},
		{Trio(), EastUS, "elsewhere", ms(90)},
	} {
		if got := tc.p.RTT(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: RTT(%s, %s) = %v, want %v", tc.p.Name, tc.a, tc.b, got, tc.want)
		}
		l := tc.p.Link(tc.a, tc.b)
		if l != tc.p.Link(tc.b, tc.a).Reverse() {
			t.Errorf("%s: Link(%s, %s) is not Link(%s, %s) reversed", tc.p.Name, tc.a, tc.b, tc.b, tc.a)
		}
		if err := l.Validate(); err != nil {
			t.Errorf("%s: %v", tc.p.Name, err)
		}
	}
	if got, want := Trio().Hosts(), []string{EastUS, GermanyWestCentral, SwedenCentral}; !slices.Equal(got, want) {
		t.Errorf("Trio().Hosts() = %v, want %v", got, want)
	}
	if got := Transatlantic().Hosts(); len(got) != 0 {
		t.Errorf("Transatlantic().Hosts() = %v, want none", got)
	}
}

func TestProfileAsymmetricPath(t *testing.T) {
	p := &Profile{Paths: map[Pair]Path{
		{"a", "b"}: {Delay: time.Millisecond},
		{"b", "a"}: {Delay: 3 * time.Millisecond},
		{"a", "c"}: {Delay: 5 * time.Millisecond},
	}}
	if l := p.Link("a", "b"); l.Out.Delay != time.Millisecond || l.In.Delay != 3*time.Millisecond {
		t.Errorf("Link(a, b) = %+v", l)
	}
	if l := p.Link("c", "a"); l.Out.Delay != 5*time.Millisecond || l.In.Delay != 5*time.Millisecond {
		t.Errorf("Link(c, a) = %+v, want the reverse path both ways", l)
	}
}

func TestProfileWith(t *testing.T) {
	orig := Trio()
	capped := orig.With(func(p Path) Path { p.Bandwidth = 1 << 20; return p })
	if capped.Name != orig.Name {
		t.Errorf("With renamed %q to %q", orig.Name, capped.Name)
	}
	for _, pair := range [][2]string{{GermanyWestCentral, EastUS}, {EastUS, EastUS}, {EastUS, "x"}} {
		got, was := capped.Path(pair[0], pair[1]), orig.Path(pair[0], pair[1])
		if got.Bandwidth != 1<<20 || got.Delay != was.Delay {
			t.Errorf("With: path %v = %+v (was %+v)", pair, got, was)
		}
		if was.Bandwidth != 0 {
			t.Errorf("With changed the original's path %v: %+v", pair, was)
		}
	}
}

func TestProfilesNamed(t *testing.T) {
	seen := map[string]bool{}
	var last time.Duration
	for _, p := range Profiles() {
		if p.Name == "" || seen[p.Name] {
			t.Errorf("profile name %q empty or repeated", p.Name)
		}
		seen[p.Name] = true
		if rtt := p.RTT("x", "y"); rtt < last {
			t.Errorf("%s: RTT %v out of order", p.Name, rtt)
		} else {
			last = rtt
		}
	}
}
