package interop

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"net/http/httptest"
	"testing"

	cmtsecp "github.com/cometbft/cometbft/crypto/secp256k1"
	gnosecp "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestYubiHSMSecp256k1LowS: a secp256k1 key on the simulated YubiHSM 2,
// which leaves S high about half the time as the device does, signs what
// gno's tm2 and CometBFT's own secp256k1 code accept (both refuse a high
// S), over enough messages that many came from the device with a high S.
func TestYubiHSMSecp256k1LowS(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(yubihsmsim.New(yubihsmsim.Config{}).Handler())
	defer srv.Close()
	st, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: srv.URL, Secret: signer.SecretBytes([]byte("password")), HTTPClient: yubihsmsim.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ki, err := st.GenerateKey(ctx, signer.ECDSASecp256k1, "k1")
	if err != nil {
		t.Fatal(err)
	}
	k, err := st.OpenKey(ctx, ki.Ref())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	compressed, err := signer.MarshalSecp256k1PublicKey(k.Public().(*ecdsa.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	var gnoPub gnosecp.PubKeySecp256k1
	copy(gnoPub[:], compressed)
	cmtPub := cmtsecp.PubKey(compressed)
	for i := range 32 {
		msg := []byte(fmt.Sprintf("sign bytes %d", i))
		sig, err := k.SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if !gnoPub.VerifyBytes(msg, sig) {
			t.Fatalf("gno refuses signature %d: %x", i, sig)
		}
		if !cmtPub.VerifySignature(msg, sig) {
			t.Fatalf("CometBFT refuses signature %d: %x", i, sig)
		}
	}
}
