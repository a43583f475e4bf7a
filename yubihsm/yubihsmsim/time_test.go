package yubihsmsim

import (
	"context"
	"crypto/ed25519"
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/internal/simtime"
)

// TestTimeMode checks that the zero Config.Time honours SIGNERKIT_SIM, as
// ledgersim's does, and that the mode decides whether a sign sleeps.
func TestTimeMode(t *testing.T) {
	profile := Profile{Name: "test", EdDSA: []Point{{0, 100 * time.Millisecond}}}
	for _, tc := range []struct {
		env  string
		mode TimeMode
		want TimeMode
	}{
		{"", TimeFromEnv, Accounted},
		{"accounted", TimeFromEnv, Accounted},
		{"realtime", TimeFromEnv, Realtime},
		{" RealTime ", TimeFromEnv, Realtime},
		{"realtime", Accounted, Accounted},
		{"", Realtime, Realtime},
	} {
		t.Setenv(simtime.EnvVar, tc.env)
		d := New(Config{Time: tc.mode, Profile: &profile})
		if got := d.Time(); got != tc.want {
			t.Errorf("SIGNERKIT_SIM=%q, Config.Time %d: Time() = %d, want %d", tc.env, tc.mode, got, tc.want)
		}
		h, bad := newHost(t, d, 1, "password")
		if h == nil {
			t.Fatalf("session: %x", bad)
		}
		h.do(CmdGenerateAsymKey, keyTemplate(9, "k", 1, CapSignEdDSA, AlgEd25519))
		pub := h.do(CmdGetPublicKey, []byte{0, 9})
		msg := []byte("a vote")
		start := time.Now()
		sig, stages := h.doStages(CmdSignEdDSA, append([]byte{0, 9}, msg...))
		took := time.Since(start)
		if len(stages) != 1 || stages[0].Duration != 100*time.Millisecond {
			t.Fatalf("SIGNERKIT_SIM=%q: stages %+v", tc.env, stages)
		}
		if len(pub) != 36 || len(sig) != 67 || !ed25519.Verify(ed25519.PublicKey(pub[4:]), msg, sig[3:]) {
			t.Fatalf("sign: %x", sig)
		}
		// Realtime must have waited the modeled time (a sleep cannot end
		// early); accounted mode is told by the stage's Slept flag, not by
		// a wall-clock bound, which a loaded machine would break.
		if slept := tc.want == Realtime; stages[0].Slept != slept || (slept && took < 100*time.Millisecond) {
			t.Errorf("SIGNERKIT_SIM=%q, Config.Time %d: slept %v after %v, want %v", tc.env, tc.mode, stages[0].Slept, took, slept)
		}
	}
}

// TestModeledHeader: the docs name the header the modeled time travels
// in, which internal/simtime defines.
func TestModeledHeader(t *testing.T) {
	if simtime.Header != "X-Signerkit-Modeled" {
		t.Errorf("simtime.Header is %q: update the docs of yubihsm and yubihsmsim", simtime.Header)
	}
}

// TestAPINamesNoInternalPackage: users cannot name internal packages, so
// the exported API and docs of yubihsm and yubihsmsim (what go doc -all
// shows) must not mention one.
func TestAPINamesNoInternalPackage(t *testing.T) {
	for _, dir := range []string{".", ".."} {
		fset := token.NewFileSet()
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		p, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		node := func(n any) { printer.Fprint(&b, fset, n); b.WriteString("\n") }
		b.WriteString(p.Doc)
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				b.WriteString(v.Doc)
				node(v.Decl)
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				b.WriteString(f.Doc)
				node(f.Decl)
			}
		}
		values(p.Consts)
		values(p.Vars)
		funcs(p.Funcs)
		for _, ty := range p.Types {
			b.WriteString(ty.Doc)
			node(ty.Decl)
			values(ty.Consts)
			values(ty.Vars)
			funcs(ty.Funcs)
			funcs(ty.Methods)
		}
		api := b.String()
		if len(api) < 1000 {
			t.Fatalf("%s: only %d bytes of API: the test reads nothing", dir, len(api))
		}
		for _, bad := range []string{"internal/", "simtime", "scp03."} {
			if i := strings.Index(api, bad); i >= 0 {
				t.Errorf("the API of %s mentions %q: …%s…", p.Name, bad, api[max(0, i-80):min(len(api), i+40)])
			}
		}
	}
}

// TestHandleDeadline: in process, Handle in accounted mode measures a
// command's modeled time against its context's deadline: a 531 ms sign
// under 300 ms is executed but not answered, with at most 300 ms
// accounted, and the error wraps context.DeadlineExceeded.
func TestHandleDeadline(t *testing.T) {
	profile := Profile{Name: "slow", EdDSA: []Point{{0, 531 * time.Millisecond}}}
	d := New(Config{Time: Accounted, Profile: &profile})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(9, "k", 1, CapSignEdDSA, AlgEd25519))
	frame, _ := h.wrap(scp03.Frame{Cmd: CmdSignEdDSA, Payload: []byte{0, 9, 'm'}}.Bytes())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp, stages, err := d.Handle(ctx, frame)
	if !errors.Is(err, context.DeadlineExceeded) || resp != nil {
		t.Fatalf("Handle: %x %v, want no answer and context.DeadlineExceeded", resp, err)
	}
	if len(stages) > 1 || len(stages) == 1 && (stages[0].Duration > 300*time.Millisecond || stages[0].Slept) {
		t.Errorf("stages %+v, want at most 300ms accounted, not slept", stages)
	}
	if d.Stats().Signs != 1 {
		t.Errorf("%d signs: the device runs the command", d.Stats().Signs)
	}
	// With time to spare, the next sign (the session has moved on by one
	// command, which the host helper cannot follow) is answered in full.
	h2, _ := newHost(t, d, 1, "password")
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	frame, iv := h2.wrap(scp03.Frame{Cmd: CmdSignEdDSA, Payload: []byte{0, 9, 'm'}}.Bytes())
	resp, stages, err = d.Handle(ctx, frame)
	if err != nil || len(stages) != 1 || stages[0].Duration != 531*time.Millisecond {
		t.Fatalf("Handle with a minute: %v %+v", err, stages)
	}
	if inner := h2.unwrap(resp, iv); inner[0] != CmdSignEdDSA|0x80 {
		t.Fatalf("sign: %x", inner)
	}
}
