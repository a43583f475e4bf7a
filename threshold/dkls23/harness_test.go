package dkls23

import (
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// tamperFunc changes round round's message from i to j in place, before
// delivery.
type tamperFunc func(round, from, to int, msg []byte)

// runKeygen runs key generation among n parties in process, with tamper
// (if not nil) applied to every message, and returns the shares or the
// first party's error.
func runKeygen(t testing.TB, th, n int, tamper tamperFunc) ([]*Share, error) {
	t.Helper()
	sid := []byte("keygen test")
	ks := make([]*Keygen, n+1)
	out := map[int]map[int][]byte{}
	for i := 1; i <= n; i++ {
		k, err := NewKeygen(sid, i, th, n, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		ks[i] = k
		if out[i], err = k.Round1(); err != nil {
			t.Fatal(err)
		}
	}
	apply(out, 1, tamper)
	in := Deliver(out)
	out = map[int]map[int][]byte{}
	for i := 1; i <= n; i++ {
		var err error
		if out[i], err = ks[i].Round2(in[i]); err != nil {
			return nil, err
		}
	}
	apply(out, 2, tamper)
	in = Deliver(out)
	shares := []*Share{}
	for i := 1; i <= n; i++ {
		s, err := ks[i].Finish(in[i])
		if err != nil {
			return nil, err
		}
		shares = append(shares, s)
	}
	return shares, nil
}

// testKey is one 2-of-3 key made once for the tests that only use a key;
// testShares returns a fresh slice of it.
var testKey = sync.OnceValues(func() ([]*Share, error) { return runKeygen(panicTB{}, 2, 3, nil) })

func testShares(t testing.TB) []*Share {
	t.Helper()
	shares, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(shares)
}

// panicTB is the testing.TB of testKey, which runs outside any one test.
type panicTB struct{ testing.TB }

func (panicTB) Helper()           {}
func (panicTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// apply runs tamper over every message of round round.
func apply(out map[int]map[int][]byte, round int, tamper tamperFunc) {
	if tamper == nil {
		return
	}
	for i, m := range out {
		for j, b := range m {
			tamper(round, i, j, b)
		}
	}
}
