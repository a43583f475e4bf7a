package yubihsmsim_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestOpenURI: a yubihsmsim: URI opens the key through HTTPClient: the
// accounted simulator is told the caller's deadline, and a sign whose
// modeled time runs past it fails with a *yubihsm.DeadlineError; the
// same key opened by a yubihsm: URI, through the package's own client,
// tells it nothing, and the same sign succeeds.
func TestOpenURI(t *testing.T) {
	const slowSignTime, deadline = 20 * time.Second, 5 * time.Second
	slow := yubihsmsim.Profile{Name: "slow", EdDSA: []yubihsmsim.Point{{Size: 0, Time: slowSignTime}}}
	dev := yubihsmsim.New(yubihsmsim.Config{Time: yubihsmsim.Accounted, Profile: &slow})
	srv := httptest.NewServer(dev.Handler())
	t.Cleanup(srv.Close)
	ctx := context.Background()
	st, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: srv.URL, Secret: signer.SecretBytes([]byte("password"))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.GenerateKey(ctx, signer.Ed25519, "slow"); err != nil {
		t.Fatal(err)
	}
	key := "connector=" + srv.URL + ";label=slow?pin-value=password&keep-alive=off"
	for _, scheme := range []string{"yubihsmsim", "YubiHSMsim", "yubihsm"} {
		s, err := signer.Open(ctx, scheme+":"+key)
		if err != nil {
			t.Fatalf("Open(%s:…): %v", scheme, err)
		}
		sctx, cancel := context.WithTimeout(ctx, deadline)
		_, err = s.SignContext(sctx, []byte("a vote"))
		cancel()
		s.Close()
		var de *yubihsm.DeadlineError
		if sim := scheme != "yubihsm"; sim && (!errors.As(err, &de) || de.Modeled != slowSignTime) {
			t.Errorf("%s: a %v sign under %v: %v, want a *yubihsm.DeadlineError", scheme, slowSignTime, deadline, err)
		} else if !sim && err != nil {
			t.Errorf("%s: a sign that passes no deadline on: %v, want success", scheme, err)
		}
	}
}

// TestParseURI: a yubihsmsim: URI has a yubihsm: URI's attributes, and its
// errors name its own scheme.
func TestParseURI(t *testing.T) {
	cfg, err := yubihsmsim.ParseURI("yubihsmsim:connector=http://127.0.0.1:1;id=0x64?sessions=2")
	if err != nil || cfg.Connector != "http://127.0.0.1:1" || cfg.Key.ID != "0064" || cfg.Sessions != 2 || cfg.HTTPClient != nil {
		t.Errorf("ParseURI: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"yubihsm:id=1", "yubihsmsim", "yubihsmsim:id=xyz", "yubihsmsim:id=1?simulator=true"} {
		_, err := yubihsmsim.ParseURI(bad)
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ParseURI(%q): %v, want a *signer.URIError", bad, err)
		}
	}
	_, err = signer.Open(context.Background(), "yubihsmsim:connector=http://127.0.0.1:1?pin-value=x")
	if !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a yubihsmsim: URI without a key: %v, want ErrInvalidArgument", err)
	}
}
