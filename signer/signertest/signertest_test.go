package signertest_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// ---------------------------------------------------------------------------
// Keys and factories.

// rsaKeys are two 2048-bit keys, made once for the whole package: RSA
// generation is slow, above all under -race. The second one is the "wrong
// key" of TestVerifyStd.
var rsaKeys = sync.OnceValues(func() ([2]*rsa.PrivateKey, error) {
	var keys [2]*rsa.PrivateKey
	var errs [2]error
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = rsa.GenerateKey(rand.Reader, 2048)
		}()
	}
	wg.Wait()
	return keys, errors.Join(errs[:]...)
})

// stdKey returns a private key for alg made with the standard library:
// a new one for Ed25519 and ECDSA (secp256k1 through crypto/ecdsa's generic
// code on signer.Secp256k1), the shared one for RSA. other picks the second
// RSA key.
func stdKey(t testing.TB, alg signer.Algorithm, other bool) crypto.Signer {
	t.Helper()
	switch {
	case alg == signer.Ed25519:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return priv
	case alg.IsECDSA():
		priv, err := ecdsa.GenerateKey(alg.Curve(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return priv
	case alg.IsRSA():
		keys, err := rsaKeys()
		if err != nil {
			t.Fatal(err)
		}
		if other {
			return keys[1]
		}
		return keys[0]
	}
	t.Fatalf("no key for %v", alg)
	return nil
}

// factory opens a new inprocess.Signer over priv on every call, so that each
// check can close its own, and hands it to wrap (nil: the key as it is).
func factory(priv crypto.PrivateKey, alg signer.Algorithm, wrap func(*inprocess.Signer) signer.Signer) signertest.Factory {
	return func() (signer.Signer, error) {
		k, err := inprocess.FromPrivateKey(priv, alg)
		if err != nil {
			return nil, err
		}
		if wrap == nil {
			return k, nil
		}
		return wrap(k), nil
	}
}

// failures splits the error Check returns into its failures, one per line
// of the form "Check: what".
func failures(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// caught reports whether some failure comes from check and contains why.
func caught(fails []string, check, why string) bool {
	for _, f := range fails {
		if strings.HasPrefix(f, check+": ") && strings.Contains(f, why) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// The suite passes good signers.

func TestCheckPassesInProcess(t *testing.T) {
	t.Parallel()
	for _, alg := range signer.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			priv := stdKey(t, alg, false)
			if err := signertest.Check(factory(priv, alg, nil), signertest.Options{}); err != nil {
				t.Errorf("Check on an inprocess %v key:\n%v", alg, err)
			}
		})
	}
}

func TestRunPassesInProcess(t *testing.T) {
	t.Parallel()
	priv := stdKey(t, signer.Ed25519, false)
	signertest.Run(t, factory(priv, signer.Ed25519, nil), signertest.Options{})
}

// TestCheckPassesGoodFakes runs the suite on fakes that do right what some
// broken signers below do wrong, so that those failures come from the
// breakage and not from the fake around it.
func TestCheckPassesGoodFakes(t *testing.T) {
	t.Parallel()
	hang := new(hangSwitch)
	cases := []struct {
		name string
		wrap func(*inprocess.Signer) signer.Signer
		opts signertest.Options
	}{
		{"refuses past MaxMessage", func(k *inprocess.Signer) signer.Signer {
			return &sizeLimited{Signer: k, max: 1024}
		}, signertest.Options{MaxMessage: 1024}},
		{"refuses past a MaxMessage below the payloads", func(k *inprocess.Signer) signer.Signer {
			return &sizeLimited{Signer: k, max: 512}
		}, signertest.Options{MaxMessage: 512}},
		{"hung device honours ctx", func(k *inprocess.Signer) signer.Signer {
			return &hangingDevice{Signer: k, dev: hang, honoursCtx: true}
		}, signertest.Options{Hang: hang.Hang, Timeout: 5 * time.Second}},
		{"modeled device inside transport", func(k *inprocess.Signer) signer.Signer {
			return &modeledDevice{k}
		}, signertest.Options{}},
		{"Options.Message and Concurrency", nil, signertest.Options{
			Message:     func(n int) []byte { return bytes.Repeat([]byte{'v'}, n) },
			Concurrency: 3,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			priv := stdKey(t, signer.Ed25519, false)
			if err := signertest.Check(factory(priv, signer.Ed25519, tc.wrap), tc.opts); err != nil {
				t.Errorf("Check on a good fake:\n%v", err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// The suite fails broken signers.

// brokenCase is a signer broken in one way, and the check (and words of its
// failure) that must report it. Other checks may fail too.
type brokenCase struct {
	name string
	alg  signer.Algorithm // of the key under the wrapper
	wrap func(k *inprocess.Signer) signer.Signer
	opts signertest.Options
	// want lists failures that must be reported, each as "Check: words":
	// a failure of that check that contains those words.
	want []string
}

func brokenCases(t *testing.T) []brokenCase {
	hang := new(hangSwitch)
	wrongPub := stdKey(t, signer.Ed25519, false).Public()
	rsaPriv := mustRSA(t) // the key stdKey gives the RSA cases
	return []brokenCase{
		{"Close wipes the key under signs in flight", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &closeNoWait{Signer: k}
		}, signertest.Options{}, []string{"CloseWhileSigning: does not verify"}},
		// (a)
		{"Public is another key", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &wrongPublic{k, wrongPub}
		}, signertest.Options{}, []string{"Public: does not verify", "SignContext: "}},
		// (b)
		{"signature with a bit flipped", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &flipBit{k}
		}, signertest.Options{}, []string{"SignContext: does not verify"}},
		{"ECDSA signature with a bit flipped", signer.ECDSAP256, func(k *inprocess.Signer) signer.Signer {
			return &flipBit{k}
		}, signertest.Options{}, []string{"SignContext: does not verify"}},
		// (c)
		{"signs a fixed message", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &fixedMessage{k}
		}, signertest.Options{}, []string{"SignContext: does not verify"}},
		// (d)
		{"P-256 SignContext in ASN.1", signer.ECDSAP256, func(k *inprocess.Signer) signer.Signer {
			return &asn1Context{k}
		}, signertest.Options{}, []string{"SignContext: want r‖s"}},
		{"P-384 SignContext in ASN.1", signer.ECDSAP384, func(k *inprocess.Signer) signer.Signer {
			return &asn1Context{k}
		}, signertest.Options{}, []string{"SignContext: want r‖s"}},
		// (e)
		{"secp256k1 high S", signer.ECDSASecp256k1, func(k *inprocess.Signer) signer.Signer {
			return &highS{k}
		}, signertest.Options{}, []string{"SignContext: high S"}},
		// (f)
		{"signs on a cancelled context", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &ignoresCancel{k}
		}, signertest.Options{}, []string{"Canceled: want an error wrapping context canceled"}},
		// (g)
		{"cancel error does not wrap ctx.Err", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &unwrappedCancel{k}
		}, signertest.Options{}, []string{"Canceled: want an error wrapping context canceled"}},
		// (h)
		{"traces a stage on a done context", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &traceWhenDone{k}
		}, signertest.Options{}, []string{"Canceled: trace reports"}},
		// (i)
		{"second Close fails", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &closeOnce{Signer: k}
		}, signertest.Options{}, []string{"Close: second Close"}},
		// (j)
		{"signs after Close", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &closeNoop{k}
		}, signertest.Options{}, []string{"Close: SignContext after Close: got nil", "Close: Sign after Close: got nil"}},
		// (k)
		{"Public nil after Close", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &publicGoneAfterClose{Signer: k}
		}, signertest.Options{}, []string{"Close: Public() changed after Close", "Public: after Close"}},
		// (l)
		{"Ed25519 Sign refuses crypto.Hash(0)", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &ed25519NeedsOptions{k}
		}, signertest.Options{}, []string{"CryptoSigner: crypto.Hash(0)"}},
		{"Ed25519 Sign reads rand", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &ed25519ReadsRand{Signer: k, checkErr: true}
		}, signertest.Options{}, []string{"CryptoSigner: rand must not be read"}},
		// (m)
		{"ECDSA Sign pads a short digest", signer.ECDSAP256, func(k *inprocess.Signer) signer.Signer {
			return &anyDigestLength{k}
		}, signertest.Options{}, []string{"CryptoSigner: digest one byte short"}},
		{"secp256k1 Sign pads a short digest", signer.ECDSASecp256k1, func(k *inprocess.Signer) signer.Signer {
			return &anyDigestLength{k}
		}, signertest.Options{}, []string{"CryptoSigner: digest one byte short"}},
		{"RSA Sign pads a short digest", signer.RSAPKCS1v15, func(k *inprocess.Signer) signer.Signer {
			return &anyDigestLength{k}
		}, signertest.Options{}, []string{"CryptoSigner: digest one byte short"}},
		// (n)
		{"modeled stage without a profile", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &modeledNoProfile{k}
		}, signertest.Options{}, []string{"Trace: names no profile"}},
		// (o)
		{"measured stage of an hour", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &hourLongStage{k}
		}, signertest.Options{}, []string{"Trace: more than the call's wall time"}},
		// (p)
		{"keeps the first call's trace", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &keepsTrace{Signer: k}
		}, signertest.Options{}, []string{"Trace: from a later call"}},
		// (q)
		{"shared signature buffer", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &sharedBuffer{Signer: k}
		}, signertest.Options{}, []string{"Concurrent: does not verify"}},
		// (r)
		{"signs past MaxMessage", signer.Ed25519, nil,
			signertest.Options{MaxMessage: 1024}, []string{"MessageTooLarge: want an error wrapping ErrMessageTooLarge"}},
		{"limit off by one", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &sizeLimited{Signer: k, max: 1025}
		}, signertest.Options{MaxMessage: 1024}, []string{"MessageTooLarge: want an error wrapping ErrMessageTooLarge"}},
		// (s)
		{"hung device ignores ctx", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &hangingDevice{Signer: k, dev: hang}
		}, signertest.Options{Hang: hang.Hang, Timeout: time.Second}, []string{"Deadline: did not return"}},
		// (t)
		{"modifies the message", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &modifiesMessage{k}
		}, signertest.Options{}, []string{"SignContext: modified the message"}},

		// More breakages.
		{"RSA-PSS SignContext with the longest salt", signer.RSAPSS, func(k *inprocess.Signer) signer.Signer {
			return &pssLongSalt{Signer: k, priv: rsaPriv}
		}, signertest.Options{}, []string{"SignContext: does not verify"}},
		{"says PSS, signs PKCS #1 v1.5", signer.RSAPKCS1v15, func(k *inprocess.Signer) signer.Signer {
			return &claimsAlgorithm{k, signer.RSAPSS}
		}, signertest.Options{}, []string{"SignContext: does not verify"}},
		{"says P-256 on a P-384 key", signer.ECDSAP384, func(k *inprocess.Signer) signer.Signer {
			return &claimsAlgorithm{k, signer.ECDSAP256}
		}, signertest.Options{}, []string{"Public: does not fit"}},
		{"no stage reported", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &noTrace{k}
		}, signertest.Options{}, []string{"Trace: no stage"}},
		{"no sign, device or transport stage", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &onlyKDF{k}
		}, signertest.Options{}, []string{"Trace: include none of sign, device, transport"}},
		{"unknown stage", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &extraStage{k, signertrace.StageInfo{Stage: 99}}
		}, signertest.Options{}, []string{"Trace: unknown stage"}},
		{"negative duration", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &extraStage{k, signertrace.StageInfo{Stage: signertrace.StageDevice, Duration: -time.Millisecond}}
		}, signertest.Options{}, []string{"Trace: negative duration"}},
		{"measured stage with a profile", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &extraStage{k, signertrace.StageInfo{Stage: signertrace.StageDevice, Profile: "fake"}}
		}, signertest.Options{}, []string{"Trace: carries Slept, Within or a Profile"}},
		{"slept outside transport", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &extraStage{k, signertrace.StageInfo{Stage: signertrace.StageDevice, Duration: time.Millisecond, Source: signertrace.Modeled, Slept: true, Profile: "fake"}}
		}, signertest.Options{}, []string{"Trace: slept"}},
		{"counter goes down", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &countDown{k}
		}, signertest.Options{}, []string{"Trace: negative increment"}},
		{"Ed25519 Sign reads rand, ignoring read errors", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &ed25519ReadsRand{Signer: k}
		}, signertest.Options{}, []string{"CryptoSigner: read rand"}},
		{"kept trace gets counts only", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &keepsTraceCounts{Signer: k}
		}, signertest.Options{}, []string{"Trace: from a later call"}},
		{"RSA-PSS Sign ignores the requested salt length", signer.RSAPSS, func(k *inprocess.Signer) signer.Signer {
			return &pssSignLongSalt{Signer: k, priv: rsaPriv}
		}, signertest.Options{}, []string{"CryptoSigner: RSA PSS over SHA-256: signature does not verify"}},
		{"returns a signature with ctx.Err", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &sigWithError{k}
		}, signertest.Options{}, []string{"Canceled: returned a signature with the error"}},
	}
}

func TestCheckCatchesBrokenSigners(t *testing.T) {
	t.Parallel()
	for _, tc := range brokenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			priv := stdKey(t, tc.alg, false)
			err := signertest.Check(factory(priv, tc.alg, tc.wrap), tc.opts)
			if err == nil {
				t.Fatalf("Check passed a signer that is broken: %s", tc.name)
			}
			fails := failures(err)
			for _, w := range tc.want {
				check, why, _ := strings.Cut(w, ": ")
				if !caught(fails, check, why) {
					t.Errorf("no %s failure mentioning %q", check, why)
				}
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("Check reported:\n%v", err)
			}
		})
	}
}

// TestCheckSubtleCases holds the cases on which the suite once judged
// wrongly (found by this file's first version): good signers it failed and
// broken ones it passed.
func TestCheckSubtleCases(t *testing.T) {
	t.Parallel()
	rsaPriv := mustRSA(t)
	cases := []struct {
		name string
		alg  signer.Algorithm
		wrap func(k *inprocess.Signer) signer.Signer
		opts signertest.Options
		// want is the check that must fail and a substring of its failure,
		// or "" when the signer is good and Check must pass.
		want, why string
		gap       string
	}{
		{"RSA Sign uses the rand it is given, as *rsa.PrivateKey does", signer.RSAPKCS1v15, func(k *inprocess.Signer) signer.Signer {
			return &stdRSA{Signer: k, priv: rsaPriv}
		}, signertest.Options{}, "", "",
			"checkCryptoSigner's optional() passes the failing reader to RSA PSS, which needs rand for its salt (checks.go optional)"},
		{"good signer with MaxMessage 100", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &sizeLimited{Signer: k, max: 100}
		}, signertest.Options{MaxMessage: 100}, "", "",
			"fixed message sizes (128 in checkTrace, 100 in checkCryptoSigner, 64 in checkDeadline, 32 elsewhere) ignore Options.MaxMessage"},
		{"counter up 2 then down 1", signer.Ed25519, func(k *inprocess.Signer) signer.Signer {
			return &countUpDown{k}
		}, signertest.Options{}, "Trace", "negative increment",
			"checkTrace looks at each counter's sum, not at each Count call (checks.go checkTrace, recorder)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			priv := stdKey(t, tc.alg, false)
			err := signertest.Check(factory(priv, tc.alg, tc.wrap), tc.opts)
			switch {
			case tc.want == "" && err == nil:
				return
			case tc.want != "" && caught(failures(err), tc.want, tc.why):
				return
			}
			t.Errorf("suite judges wrongly again: %s; Check returned: %v", tc.gap, err)
		})
	}
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	return stdKey(t, signer.RSAPSS, false).(*rsa.PrivateKey)
}

// ---------------------------------------------------------------------------
// Broken and fake signers. Each embeds a good *inprocess.Signer and overrides
// one method to break one thing.

type wrongPublic struct {
	*inprocess.Signer
	pub crypto.PublicKey
}

func (w *wrongPublic) Public() crypto.PublicKey { return w.pub }

type flipBit struct{ *inprocess.Signer }

func (w *flipBit) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err == nil {
		sig[len(sig)/3] ^= 0x04
	}
	return sig, err
}

type fixedMessage struct{ *inprocess.Signer }

func (w *fixedMessage) SignContext(ctx context.Context, _ []byte) ([]byte, error) {
	return w.Signer.SignContext(ctx, []byte("always this message"))
}

type asn1Context struct{ *inprocess.Signer }

func (w *asn1Context) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err != nil {
		return nil, err
	}
	return signer.ECDSAToASN1(w.Algorithm(), sig)
}

type highS struct{ *inprocess.Signer }

func (w *highS) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err != nil {
		return nil, err
	}
	n := signer.Secp256k1().Params().N
	s := new(big.Int).SetBytes(sig[32:])
	s.Sub(n, s).FillBytes(sig[32:])
	return sig, nil
}

type ignoresCancel struct{ *inprocess.Signer }

func (w *ignoresCancel) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	return w.Signer.SignContext(context.WithoutCancel(ctx), msg)
}

type unwrappedCancel struct{ *inprocess.Signer }

func (w *unwrappedCancel) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sign aborted: %v", err) // %v: does not wrap
	}
	return w.Signer.SignContext(ctx, msg)
}

type traceWhenDone struct{ *inprocess.Signer }

func (w *traceWhenDone) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	tr := signertrace.ContextTrace(ctx)
	tr.Measured(signertrace.StageSession, tr.Start()) // before looking at ctx
	return w.Signer.SignContext(ctx, msg)
}

type closeOnce struct {
	*inprocess.Signer
	closed atomic.Bool
}

func (w *closeOnce) Close() error {
	if !w.closed.CompareAndSwap(false, true) {
		return errors.New("already closed")
	}
	return w.Signer.Close()
}

type closeNoop struct{ *inprocess.Signer }

func (w *closeNoop) Close() error { return nil }

type publicGoneAfterClose struct {
	*inprocess.Signer
	closed atomic.Bool
}

func (w *publicGoneAfterClose) Public() crypto.PublicKey {
	if w.closed.Load() {
		return nil
	}
	return w.Signer.Public()
}

func (w *publicGoneAfterClose) Close() error {
	w.closed.Store(true)
	return w.Signer.Close()
}

type ed25519NeedsOptions struct{ *inprocess.Signer }

func (w *ed25519NeedsOptions) Sign(rnd io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if _, ok := opts.(*ed25519.Options); !ok {
		return nil, fmt.Errorf("want *ed25519.Options, got %T: %w", opts, signer.ErrUnsupported)
	}
	return w.Signer.Sign(rnd, msg, opts)
}

// ed25519ReadsRand reads a "blinding nonce" from rand, which pure Ed25519
// must ignore; with checkErr it fails when the read fails.
type ed25519ReadsRand struct {
	*inprocess.Signer
	checkErr bool
}

func (w *ed25519ReadsRand) Sign(rnd io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var nonce [32]byte
	if _, err := io.ReadFull(rnd, nonce[:]); err != nil && w.checkErr {
		return nil, fmt.Errorf("blinding nonce: %w", err)
	}
	return w.Signer.Sign(rnd, msg, opts)
}

// anyDigestLength pads or truncates a digest to the length of the hash that
// opts names, and signs it.
type anyDigestLength struct{ *inprocess.Signer }

func (w *anyDigestLength) Sign(rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts != nil {
		if h := opts.HashFunc(); h == w.Algorithm().Hash() && h != 0 && len(digest) != h.Size() {
			d := make([]byte, h.Size())
			copy(d, digest)
			digest = d
		}
	}
	return w.Signer.Sign(rnd, digest, opts)
}

type modeledNoProfile struct{ *inprocess.Signer }

func (w *modeledNoProfile) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err == nil {
		signertrace.ContextTrace(ctx).Modeled(signertrace.StageWire, 40*time.Microsecond, false, "")
	}
	return sig, err
}

type hourLongStage struct{ *inprocess.Signer }

func (w *hourLongStage) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err == nil {
		signertrace.ContextTrace(ctx).MeasuredDuration(signertrace.StageDevice, time.Hour)
	}
	return sig, err
}

// withoutValues hides ctx's values (its Trace) and keeps its deadline and
// cancellation.
type withoutValues struct{ context.Context }

func (withoutValues) Value(any) any { return nil }

// keepsTrace keeps the Trace of its first traced call and reports every
// later sign to it.
type keepsTrace struct {
	*inprocess.Signer
	mu sync.Mutex
	tr *signertrace.Trace
}

func (w *keepsTrace) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keepsTrace: %w", err)
	}
	w.mu.Lock()
	if w.tr == nil {
		w.tr = signertrace.ContextTrace(ctx)
	}
	tr := w.tr
	w.mu.Unlock()
	start := tr.Start()
	sig, err := w.Signer.SignContext(withoutValues{ctx}, msg)
	tr.Measured(signertrace.StageSign, start)
	return sig, err
}

// keepsTraceCounts reports its stages right but counts round trips on the
// Trace of its first traced call, every call.
type keepsTraceCounts struct {
	*inprocess.Signer
	mu sync.Mutex
	tr *signertrace.Trace
}

func (w *keepsTraceCounts) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	if w.tr == nil {
		w.tr = signertrace.ContextTrace(ctx)
	}
	tr := w.tr
	w.mu.Unlock()
	tr.Add(signertrace.CountRoundTrips, 1)
	return sig, nil
}

// sharedBuffer returns its signature through a buffer shared by all calls:
// every access holds the lock, so there is no data race for -race to see,
// but a concurrent call can overwrite the buffer between the two.
type sharedBuffer struct {
	*inprocess.Signer
	mu  sync.Mutex
	buf []byte
}

func (w *sharedBuffer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.buf = append(w.buf[:0], sig...)
	w.mu.Unlock()
	time.Sleep(time.Millisecond) // "talk to the device"
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf...), nil
}

// sizeLimited refuses messages longer than max (0: no limit).
type sizeLimited struct {
	*inprocess.Signer
	max int
}

func (w *sizeLimited) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if w.max > 0 && len(msg) > w.max {
		return nil, fmt.Errorf("%d-byte message, device takes %d: %w", len(msg), w.max, signer.ErrMessageTooLarge)
	}
	return w.Signer.SignContext(ctx, msg)
}

// hangSwitch makes the fake devices that share it stop answering.
type hangSwitch struct {
	mu   sync.Mutex
	gate chan struct{} // non-nil while hung; closed on release
}

func (h *hangSwitch) Hang() (release func()) {
	gate := make(chan struct{})
	h.mu.Lock()
	h.gate = gate
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.gate = nil
			h.mu.Unlock()
			close(gate)
		})
	}
}

func (h *hangSwitch) hung() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gate
}

// hangingDevice waits while its device is hung: until release, or, with
// honoursCtx, until ctx is done.
type hangingDevice struct {
	*inprocess.Signer
	dev        *hangSwitch
	honoursCtx bool
}

func (w *hangingDevice) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	if gate := w.dev.hung(); gate != nil {
		if w.honoursCtx {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, fmt.Errorf("device: %w", ctx.Err())
			}
		} else {
			<-gate
		}
	}
	return w.Signer.SignContext(ctx, msg)
}

// modeledDevice reports what a simulated device does: a measured transport
// stage inside which it slept a modeled device stage, counters, then the
// host's sign stage.
type modeledDevice struct{ *inprocess.Signer }

func (w *modeledDevice) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	const d = 200 * time.Microsecond
	time.Sleep(d)
	tr.Modeled(signertrace.StageDevice, d, true, "fake (signertest_test.go)")
	tr.Add(signertrace.CountAPDUs, 2)
	tr.Measured(signertrace.StageTransport, start)
	tr.Modeled(signertrace.StageWire, 50*time.Microsecond, false, "fake (signertest_test.go)")
	return w.Signer.SignContext(ctx, msg)
}

type modifiesMessage struct{ *inprocess.Signer }

func (w *modifiesMessage) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if len(msg) > 0 {
		msg[0] ^= 0x80 // "frames" the message in place
	}
	return w.Signer.SignContext(ctx, msg)
}

// pssLongSalt makes PSS signatures with the longest salt, not one as long
// as the hash.
type pssLongSalt struct {
	*inprocess.Signer
	priv *rsa.PrivateKey
}

func (w *pssLongSalt) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if _, err := w.Signer.SignContext(ctx, msg); err != nil { // ctx, Close, trace
		return nil, err
	}
	d := sha256.Sum256(msg)
	return rsa.SignPSS(rand.Reader, w.priv, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto})
}

// pssSignLongSalt does the same in crypto.Signer.Sign, whatever salt length
// opts asks for.
type pssSignLongSalt struct {
	*inprocess.Signer
	priv *rsa.PrivateKey
}

func (w *pssSignLongSalt) Sign(rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := w.Signer.Sign(rnd, digest, opts) // checks Close and digest
	pss, ok := opts.(*rsa.PSSOptions)
	if err != nil || !ok {
		return sig, err
	}
	return rsa.SignPSS(rand.Reader, w.priv, pss.Hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto})
}

// claimsAlgorithm says its SignContext uses alg, which it does not.
type claimsAlgorithm struct {
	*inprocess.Signer
	alg signer.Algorithm
}

func (w *claimsAlgorithm) Algorithm() signer.Algorithm { return w.alg }

type noTrace struct{ *inprocess.Signer }

func (w *noTrace) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	return w.Signer.SignContext(withoutValues{ctx}, msg)
}

// onlyKDF reports its sign as a KDF stage.
type onlyKDF struct{ *inprocess.Signer }

func (w *onlyKDF) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	sig, err := w.Signer.SignContext(withoutValues{ctx}, msg)
	tr.Measured(signertrace.StageKDF, start)
	return sig, err
}

// extraStage reports info after each successful sign.
type extraStage struct {
	*inprocess.Signer
	info signertrace.StageInfo
}

func (w *extraStage) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if tr := signertrace.ContextTrace(ctx); err == nil && tr != nil && tr.StageDone != nil {
		tr.StageDone(w.info)
	}
	return sig, err
}

// countUpDown reports a counter that grows by 2, then by −1.
type countUpDown struct{ *inprocess.Signer }

func (w *countUpDown) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err == nil {
		tr := signertrace.ContextTrace(ctx)
		tr.Add(signertrace.CountRetries, 2)
		tr.Add(signertrace.CountRetries, -1)
	}
	return sig, err
}

// stdRSA signs in crypto.Signer.Sign as *rsa.PrivateKey.Sign does, with the
// rand it is given (PSS reads its salt from it): a good signer.
type stdRSA struct {
	*inprocess.Signer
	priv *rsa.PrivateKey
}

func (w *stdRSA) Sign(rnd io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if _, err := w.Signer.Sign(rand.Reader, digest, opts); err != nil { // checks Close and digest
		return nil, err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	return w.priv.Sign(rnd, digest, opts)
}

type countDown struct{ *inprocess.Signer }

func (w *countDown) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	sig, err := w.Signer.SignContext(ctx, msg)
	if err == nil {
		signertrace.ContextTrace(ctx).Add(signertrace.CountRetries, -1)
	}
	return sig, err
}

// sigWithError returns, on a done context, the error and a signature made
// anyway.
type sigWithError struct{ *inprocess.Signer }

func (w *sigWithError) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		sig, _ := w.Signer.SignContext(withoutValues{context.WithoutCancel(ctx)}, msg)
		return sig, fmt.Errorf("too late: %w", err)
	}
	return w.Signer.SignContext(ctx, msg)
}

// ---------------------------------------------------------------------------
// VerifyStd.

// signStd signs msg for alg with the standard library only, in the wire
// form SignContext returns (low-S for secp256k1).
func signStd(t testing.TB, alg signer.Algorithm, priv crypto.Signer, msg []byte) []byte {
	t.Helper()
	var sig []byte
	var err error
	switch {
	case alg == signer.Ed25519:
		sig = ed25519.Sign(priv.(ed25519.PrivateKey), msg)
	case alg.IsECDSA():
		k := priv.(*ecdsa.PrivateKey)
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, k, alg.Digest(msg)); err == nil {
			n := k.Curve.Params().N
			if alg == signer.ECDSASecp256k1 && s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
				s.Sub(n, s)
			}
			size := (n.BitLen() + 7) / 8
			sig = make([]byte, 2*size)
			r.FillBytes(sig[:size])
			s.FillBytes(sig[size:])
		}
	case alg == signer.RSAPKCS1v15:
		sig, err = rsa.SignPKCS1v15(nil, priv.(*rsa.PrivateKey), crypto.SHA256, alg.Digest(msg))
	case alg == signer.RSAPSS:
		sig, err = rsa.SignPSS(rand.Reader, priv.(*rsa.PrivateKey), crypto.SHA256, alg.Digest(msg),
			&rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	}
	if err != nil {
		t.Fatalf("signing with the standard library: %v", err)
	}
	return sig
}

// stdOK checks sig with the standard library directly, apart from
// VerifyStd. It does not check low-S.
func stdOK(alg signer.Algorithm, pub crypto.PublicKey, msg, sig []byte) bool {
	switch {
	case alg == signer.Ed25519:
		return ed25519.Verify(pub.(ed25519.PublicKey), msg, sig)
	case alg.IsECDSA():
		size := len(sig) / 2
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(pub.(*ecdsa.PublicKey), alg.Digest(msg), r, s)
	case alg == signer.RSAPKCS1v15:
		return rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, alg.Digest(msg), sig) == nil
	case alg == signer.RSAPSS:
		return rsa.VerifyPSS(pub.(*rsa.PublicKey), crypto.SHA256, alg.Digest(msg), sig,
			&rsa.PSSOptions{SaltLength: sha256.Size}) == nil
	}
	return false
}

// rejectCase is a signature VerifyStd must refuse, and words of its error.
type rejectCase struct {
	what          string
	pub           crypto.PublicKey
	msg, sig      []byte
	alg           signer.Algorithm
	errorContains string
}

func TestVerifyStd(t *testing.T) {
	t.Parallel()
	for _, alg := range signer.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			priv := stdKey(t, alg, false)
			pub := priv.Public()
			msg := make([]byte, 100)
			rand.Read(msg)

			// Valid signatures: one made here with the standard library,
			// one from an inprocess key; both checked with the standard
			// library directly before VerifyStd is asked.
			key, err := inprocess.FromPrivateKey(priv, alg)
			if err != nil {
				t.Fatal(err)
			}
			defer key.Close()
			fromKey, err := key.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			valid := map[string][]byte{"standard library": signStd(t, alg, priv, msg), "inprocess": fromKey}
			for from, sig := range valid {
				if !stdOK(alg, pub, msg, sig) {
					t.Fatalf("%s signature does not verify with the standard library", from)
				}
				if err := signertest.VerifyStd(alg, pub, msg, sig); err != nil {
					t.Errorf("VerifyStd rejects a valid %s signature: %v", from, err)
				}
				if err := signertest.VerifyStd(alg, pub, bytes.Clone(msg), bytes.Clone(sig)); err != nil {
					t.Errorf("VerifyStd rejects a copy of a valid %s signature: %v", from, err)
				}
			}
			sig := valid["standard library"]

			other := stdKey(t, alg, true).Public()
			wrongType := stdKey(t, signer.Ed25519, false).Public()
			if alg == signer.Ed25519 {
				wrongType = stdKey(t, signer.ECDSAP256, false).Public()
			}
			flipped := bytes.Clone(msg)
			flipped[50] ^= 0x01
			reject := []rejectCase{
				{"one byte short", pub, msg, sig[:len(sig)-1], alg, "bytes"},
				{"one byte long", pub, msg, append(bytes.Clone(sig), 0), alg, "bytes"},
				{"empty signature", pub, msg, nil, alg, "bytes"},
				{"another message", pub, flipped, sig, alg, "does not verify"},
				{"empty message", pub, nil, sig, alg, "does not verify"},
				{"another key", other, msg, sig, alg, "does not verify"},
				{"key of another type", wrongType, msg, sig, alg, "public key is"},
				{"nil key", nil, msg, sig, alg, "public key is"},
				{"algorithm 0", pub, msg, sig, 0, "unknown algorithm"},
			}
			for _, i := range []int{0, len(sig) / 2, len(sig) - 1} {
				bad := bytes.Clone(sig)
				bad[i] ^= 0x80
				reject = append(reject, rejectCase{fmt.Sprintf("bit flipped in byte %d", i), pub, msg, bad, alg, ""})
			}
			for _, r := range reject {
				err := signertest.VerifyStd(r.alg, r.pub, r.msg, r.sig)
				if err == nil {
					t.Errorf("VerifyStd accepts %s", r.what)
				} else if !strings.Contains(err.Error(), r.errorContains) {
					t.Errorf("VerifyStd on %s: %v, want it to say %q", r.what, err, r.errorContains)
				}
			}
			if !bytes.Equal(sig, valid["standard library"]) || !stdOK(alg, pub, msg, sig) {
				t.Fatal("the rejection cases changed the valid signature")
			}

			switch {
			case alg.IsECDSA():
				// ASN.1, as crypto.Signer makes it, is not SignContext's form.
				der, err := signer.ECDSAToASN1(alg, sig)
				if err != nil {
					t.Fatal(err)
				}
				if !ecdsa.VerifyASN1(pub.(*ecdsa.PublicKey), alg.Digest(msg), der) {
					t.Fatal("ASN.1 form does not verify with the standard library")
				}
				if signertest.VerifyStd(alg, pub, msg, der) == nil {
					t.Error("VerifyStd accepts an ASN.1 signature")
				}
				// r and s swapped.
				size := len(sig) / 2
				swapped := append(bytes.Clone(sig[size:]), sig[:size]...)
				if signertest.VerifyStd(alg, pub, msg, swapped) == nil {
					t.Error("VerifyStd accepts r and s swapped")
				}
				// n − s verifies with crypto/ecdsa but is high for
				// secp256k1, where VerifyStd must refuse it.
				n := pub.(*ecdsa.PublicKey).Curve.Params().N
				neg := bytes.Clone(sig)
				new(big.Int).Sub(n, new(big.Int).SetBytes(sig[size:])).FillBytes(neg[size:])
				if !stdOK(alg, pub, msg, neg) {
					t.Fatal("r‖(n−s) does not verify with crypto/ecdsa")
				}
				err = signertest.VerifyStd(alg, pub, msg, neg)
				if alg == signer.ECDSASecp256k1 {
					if err == nil || !strings.Contains(err.Error(), "high S") {
						t.Errorf("VerifyStd on a high-S secp256k1 signature: %v, want a high-S error", err)
					}
				} else if err != nil {
					t.Errorf("VerifyStd rejects the valid r‖(n−s) %v signature: %v", alg, err)
				}
			case alg.IsRSA():
				// The other RSA scheme, and PSS with a salt longer than the
				// hash, are refused.
				k := priv.(*rsa.PrivateKey)
				otherScheme := signStd(t, signer.RSAPKCS1v15+signer.RSAPSS-alg, k, msg)
				if signertest.VerifyStd(alg, pub, msg, otherScheme) == nil {
					t.Errorf("VerifyStd(%v) accepts a signature of the other RSA scheme", alg)
				}
				d := sha256.Sum256(msg)
				long, err := rsa.SignPSS(rand.Reader, k, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto})
				if err != nil {
					t.Fatal(err)
				}
				if rsa.VerifyPSS(&k.PublicKey, crypto.SHA256, d[:], long, nil) != nil {
					t.Fatal("long-salt PSS signature does not verify with crypto/rsa")
				}
				if signertest.VerifyStd(signer.RSAPSS, pub, msg, long) == nil {
					t.Error("VerifyStd accepts a PSS signature whose salt is longer than the hash")
				}
			case alg == signer.Ed25519:
				// Ed25519ph of the same message is another signature.
				ph := sha512.Sum512(msg)
				phSig, err := priv.Sign(nil, ph[:], &ed25519.Options{Hash: crypto.SHA512})
				if err != nil {
					t.Fatal(err)
				}
				if ed25519.VerifyWithOptions(pub.(ed25519.PublicKey), ph[:], phSig, &ed25519.Options{Hash: crypto.SHA512}) != nil {
					t.Fatal("Ed25519ph signature does not verify with crypto/ed25519")
				}
				if signertest.VerifyStd(alg, pub, msg, phSig) == nil {
					t.Error("VerifyStd accepts an Ed25519ph signature as pure Ed25519")
				}
			}
		})
	}
}

// TestVerifyStdKeyOfAnotherCurve: VerifyStd(ECDSAP256, …) must refuse a
// P-384 key and its 96-byte signature, as signer.Verify does.
func TestVerifyStdKeyOfAnotherCurve(t *testing.T) {
	t.Parallel()
	priv := stdKey(t, signer.ECDSAP384, false).(*ecdsa.PrivateKey)
	msg := []byte("p256 says the algorithm, the key is P-384")
	d := signer.ECDSAP256.Digest(msg) // SHA-256, as VerifyStd hashes for p256
	r, s, err := ecdsa.Sign(rand.Reader, priv, d)
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 96)
	r.FillBytes(sig[:48])
	s.FillBytes(sig[48:])
	if !ecdsa.Verify(&priv.PublicKey, d, r, s) {
		t.Fatal("does not verify with crypto/ecdsa")
	}
	if err := signertest.VerifyStd(signer.ECDSAP256, &priv.PublicKey, msg, sig); err == nil {
		t.Error("VerifyStd(ECDSAP256) accepts a P-384 key and a 96-byte signature")
	}
	if err := signer.ECDSAP256.Verify(&priv.PublicKey, msg, sig); err == nil {
		t.Error("signer.Verify(ECDSAP256) accepts a P-384 key")
	}
}

// validatorApp is a fake device that, like the Ledger validator app, signs
// only messages whose leading 8-byte height rises strictly, so it refuses
// a byte-identical retransmit and anything out of order.
type validatorApp struct {
	*inprocess.Signer
	mu   sync.Mutex
	last uint64
}

func (v *validatorApp) admit(msg []byte) error {
	if len(msg) < 8 {
		return fmt.Errorf("validatorApp: %d-byte message: %w", len(msg), signer.ErrInvalidMessage)
	}
	h := uint64(0)
	for _, b := range msg[:8] {
		h = h<<8 | uint64(b)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if h <= v.last {
		return fmt.Errorf("validatorApp: height %d after %d: %w", h, v.last, signer.ErrDoubleSign)
	}
	v.last = h
	return nil
}

func (v *validatorApp) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := v.admit(msg); err != nil {
		return nil, err
	}
	return v.Signer.SignContext(ctx, msg)
}

func (v *validatorApp) Sign(rnd io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(signer.Ed25519, msg, opts); err != nil {
		return nil, err
	}
	if err := v.admit(msg); err != nil {
		return nil, err
	}
	return v.Signer.Sign(rnd, msg, opts)
}

// TestCheckPassesValidatorApp shows that a device which refuses double
// signs passes the suite when Options.Message hands out rising heights and
// signs come one at a time.
func TestCheckPassesValidatorApp(t *testing.T) {
	t.Parallel()
	priv := stdKey(t, signer.Ed25519, false)
	var height atomic.Uint64
	message := func(size int) []byte {
		msg := make([]byte, max(size, 8))
		h := height.Add(1)
		for i := 7; i >= 0; i-- {
			msg[i] = byte(h)
			h >>= 8
		}
		return msg
	}
	open := factory(priv, signer.Ed25519, func(k *inprocess.Signer) signer.Signer { return &validatorApp{Signer: k} })
	if err := signertest.Check(open, signertest.Options{Message: message, Concurrency: 1}); err != nil {
		t.Errorf("a validator-app-like device fails the suite:\n%v", err)
	}
	// Without Message the same device is refused: the check is not vacuous.
	if err := signertest.Check(open, signertest.Options{Concurrency: 1}); err == nil {
		t.Error("the suite passes a device that refuses random messages")
	}
}

// closeNoWait wipes its key on Close without waiting for signs in flight:
// a sign that was under way returns a signature made with the wiped key.
type closeNoWait struct {
	*inprocess.Signer
	closed atomic.Bool
}

func (w *closeNoWait) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if w.closed.Load() {
		return nil, signer.ErrClosed
	}
	sig, err := w.Signer.SignContext(ctx, msg)
	time.Sleep(time.Millisecond) // still in flight
	if w.closed.Load() {
		return make([]byte, len(sig)), err // what a wiped key signs
	}
	return sig, err
}

func (w *closeNoWait) Close() error {
	w.closed.Store(true)
	return nil
}
