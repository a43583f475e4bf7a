package bcryptsalt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// Known answers from docs/protocols.md C.5, checked there against gno's own
// salted bcrypt. The second is the one check at cost 12, gnokey's.
func TestKnownAnswers(t *testing.T) {
	t.Parallel()
	salt := []byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf}
	cases := []struct {
		password string
		salt     []byte
		cost     int
		want     string
	}{
		{"pw", make([]byte, SaltSize), 4, "$2a$04$......................CZJXs39HZ6odvxM3EvHl/Fh/PsT/WM6"},
		{"password", salt, 12, "$2a$12$mIEgm4QjnocmoYoppI0spuygELuCDoRy0aHPbQJKdtXyEMoKQzl4K"},
	}
	for _, tc := range cases {
		// x/crypto/bcrypt checks the known answer on another core while
		// Hash computes it: at cost 12 each takes most of a second. When
		// Hash's result differs from it, that result is checked too.
		accepted := make(chan error, 1)
		go func() { accepted <- bcrypt.CompareHashAndPassword([]byte(tc.want), []byte(tc.password)) }()
		got, err := Hash(context.Background(), []byte(tc.password), tc.salt, tc.cost)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("Hash(%q, cost %d) = %s, want %s", tc.password, tc.cost, got, tc.want)
			if err := bcrypt.CompareHashAndPassword(got, []byte(tc.password)); err != nil {
				t.Errorf("x/crypto/bcrypt rejects %s: %v", got, err)
			}
		}
		if err := <-accepted; err != nil {
			t.Errorf("x/crypto/bcrypt rejects %s: %v", tc.want, err)
		}
	}
}

// Every hash passes x/crypto/bcrypt's check, across costs, salts and
// password lengths, and fails it for another password.
func TestIsBcrypt(t *testing.T) {
	t.Parallel()
	// Every length at the lowest cost, a few at higher ones: each step
	// doubles the time, and -race makes it ten times slower.
	lengths := map[int][]int{
		4: {0, 1, 2, 7, 8, 31, 55, 56, 57, 70, 71, 72, 73, 100, 200},
		5: {0, 32, 72, 73},
		6: {1, 80},
		7: {5},
		8: {72},
	}
	for cost := MinCost; cost <= 8; cost++ {
		for _, n := range lengths[cost] {
			pw := make([]byte, n)
			rand.Read(pw)
			for i := range pw {
				if pw[i] == 0 { // a NUL would end the password for C bcrypt
					pw[i] = 1
				}
			}
			salt := make([]byte, SaltSize)
			rand.Read(salt)
			h, err := Hash(context.Background(), pw, salt, cost)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != HashSize {
				t.Fatalf("hash is %d bytes, want %d", len(h), HashSize)
			}
			if err := bcrypt.CompareHashAndPassword(h, pw); err != nil {
				t.Errorf("cost %d, %d-byte password: x/crypto/bcrypt rejects %s: %v", cost, n, h, err)
			}
			if got, _ := bcrypt.Cost(h); got != cost {
				t.Errorf("bcrypt.Cost(%s) = %d, want %d", h, got, cost)
			}
			other := append([]byte{'x'}, pw...) // its first 72 bytes differ too
			if bcrypt.CompareHashAndPassword(h, other) == nil {
				t.Errorf("cost %d, %d-byte password: another password matches too", cost, n)
			}
			if n > 72 {
				// bcrypt reads 72 bytes: the rest changes nothing.
				if err := bcrypt.CompareHashAndPassword(h, pw[:72]); err != nil {
					t.Errorf("%d-byte password: its first 72 bytes do not match: %v", n, err)
				}
				h72, _ := Hash(context.Background(), pw[:72], salt, cost)
				if !bytes.Equal(h, h72) {
					t.Errorf("%d-byte password hashes apart from its first 72 bytes", n)
				}
			}
		}
	}
}

// A hash made by x/crypto/bcrypt, with its random salt, comes out the same
// when Hash is given that salt.
func TestSameAsXCrypto(t *testing.T) {
	t.Parallel()
	for cost := MinCost; cost <= 6; cost++ {
		pw := []byte(fmt.Sprintf("passphrase at cost %d", cost))
		want, err := bcrypt.GenerateFromPassword(pw, cost)
		if err != nil {
			t.Fatal(err)
		}
		salt, err := encoding.DecodeString(string(want[7:29]))
		if err != nil || len(salt) != SaltSize {
			t.Fatalf("salt of %s: %v", want, err)
		}
		got, err := Hash(context.Background(), pw, salt, cost)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("cost %d: Hash = %s, x/crypto/bcrypt = %s", cost, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 15, 17} {
		if _, err := Hash(ctx, []byte("pw"), make([]byte, n), 4); err == nil {
			t.Errorf("a %d-byte salt was taken", n)
		}
	}
	for _, cost := range []int{-1, 0, 3, 32} {
		if _, err := Hash(ctx, []byte("pw"), make([]byte, SaltSize), cost); err == nil {
			t.Errorf("cost %d was taken", cost)
		}
	}
}

func TestContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Hash(ctx, []byte("pw"), make([]byte, SaltSize), 4); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: got %v", err)
	}
	// Cancelled while running: the context says it is live the first
	// time it is asked (the check before the rounds), then cancelled. Cost
	// 31 would take days, so returning at all shows the rounds look at it.
	late := &cancelledLater{Context: context.Background(), live: 1}
	if _, err := Hash(late, []byte("pw"), make([]byte, SaltSize), MaxCost); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while hashing: got %v", err)
	}
	if late.asked < 2 {
		t.Errorf("the context was asked %d times, want it asked between rounds", late.asked)
	}
}

// cancelledLater is a context whose Err is nil the first live times it is
// asked and context.Canceled after.
type cancelledLater struct {
	context.Context
	live, asked int
}

func (c *cancelledLater) Err() error {
	c.asked++
	if c.asked <= c.live {
		return nil
	}
	return context.Canceled
}

// BenchmarkHash compares the salted bcrypt with golang.org/x/crypto/bcrypt
// at gnokey's cost: the same rounds, so about the same time.
func BenchmarkHash(b *testing.B) {
	pw := []byte("a passphrase")
	salt := make([]byte, SaltSize)
	b.Run("impl=bcryptsalt/cost=12", func(b *testing.B) {
		for b.Loop() {
			if _, err := Hash(context.Background(), pw, salt, 12); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=x-crypto-bcrypt/cost=12", func(b *testing.B) {
		for b.Loop() {
			if _, err := bcrypt.GenerateFromPassword(pw, 12); err != nil {
				b.Fatal(err)
			}
		}
	})
}
