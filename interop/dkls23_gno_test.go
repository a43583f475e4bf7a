package interop

import (
	"crypto/sha256"
	"testing"

	"github.com/gnolang/gno/tm2/pkg/crypto"
	gnosecp "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"
	"github.com/gnolang/gno/tm2/pkg/sdk/bank"
	"github.com/gnolang/gno/tm2/pkg/std"

	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// TestDKLS23SignsGnoTx: a 2-of-3 DKLS23 key (threshold/dkls23) signs a gno
// transaction's sign bytes, sent from the gnokey address of the group key,
// with each pair of parties, and gno v1.7.1's own secp256k1 code accepts
// every signature (it refuses a high S) while refusing it for another
// account sequence.
func TestDKLS23SignsGnoTx(t *testing.T) {
	_, shares, err := dkls23test.Keygen(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	var pub gnosecp.PubKeySecp256k1
	copy(pub[:], shares[0].PublicKey())
	from := pub.Address()
	to := crypto.AddressFromPreimage([]byte("recipient"))
	msg := bank.NewMsgSend(from, to, std.NewCoins(std.NewCoin("ugnot", 1000)))
	tx := std.NewTx([]std.Msg{msg}, std.NewFee(100000, std.NewCoin("ugnot", 10)), nil, "dkls23")
	if err := tx.ValidateBasic(); err == nil {
		t.Fatal("an unsigned transaction passes ValidateBasic")
	}
	for seq, set := range [][]int{{1, 2}, {1, 3}, {2, 3}} {
		signBytes, err := tx.GetSignBytes("dev", 7, uint64(seq))
		if err != nil {
			t.Fatal(err)
		}
		_, pre, err := dkls23test.Presign(shares, set)
		if err != nil {
			t.Fatal(err)
		}
		sig := signGno(t, shares[0].PublicKey(), pre, signBytes)
		if !pub.VerifyBytes(signBytes, sig) {
			t.Fatalf("signers %v: gno refuses the signature", set)
		}
		other, _ := tx.GetSignBytes("dev", 7, uint64(seq)+10)
		if pub.VerifyBytes(other, sig) {
			t.Fatal("gno accepts the signature for another sequence")
		}
		signed := tx
		signed.Signatures = []std.Signature{{PubKey: pub, Signature: sig}}
		if err := signed.ValidateBasic(); err != nil {
			t.Fatal(err)
		}
		if got := signed.GetSigners(); len(got) != 1 || got[0] != from {
			t.Fatalf("signers %v, want %s", got, from)
		}
	}
	if crypto.AddressToBech32(from)[:2] != "g1" {
		t.Fatalf("address %s is not a gno address", crypto.AddressToBech32(from))
	}
}

// signGno runs the online round for the sign bytes and returns gno's
// 64-byte r‖s.
func signGno(t *testing.T, groupKey []byte, pre map[int]*dkls23.Presignature, signBytes []byte) []byte {
	t.Helper()
	hash := sha256.Sum256(signBytes)
	var parts []*dkls23.SignShare
	for _, p := range pre {
		s, err := p.Sign(hash[:])
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	sig, err := dkls23.Combine(groupKey, hash[:], parts)
	if err != nil {
		t.Fatal(err)
	}
	r, s := sig.R(), sig.S()
	rb, sb := r.Bytes(), s.Bytes()
	return append(rb[:], sb[:]...)
}
