package yubihsmsim_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	yubihsm "github.com/certusone/yubihsm-go"
	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/connector"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// goSession opens a yubihsm-go session manager on a fresh simulator.
func goSession(t *testing.T) func(*commands.CommandMessage, error) commands.Response {
	t.Helper()
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv := httptest.NewServer(dev.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	m, err := yubihsm.NewSessionManager(connector.NewHTTPConnector(strings.TrimPrefix(srv.URL, "http://")), 1, "password")
	if err != nil {
		t.Fatalf("NewSessionManager: %v", err)
	}
	t.Cleanup(m.Destroy)
	return func(c *commands.CommandMessage, err error) commands.Response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		r, err := m.SendEncryptedCommand(c)
		if err != nil {
			t.Fatalf("command 0x%02x: %v", c.CommandType, err)
		}
		return r
	}
}

// TestYubihsmGoCurves: with the unmodified yubihsm-go client, P-384 and
// secp256k1 keys generated and put on the simulator give their public
// keys, and their Sign ECDSA signatures verify with crypto/ecdsa and with
// decred's secp256k1; over many signatures a secp256k1 key gives both
// high and low S, as a device that does not canonicalise S does.
func TestYubihsmGoCurves(t *testing.T) {
	send := goSession(t)
	msg := []byte("a vote at height 1")

	send(commands.CreateGenerateAsymmetricKeyCommand(0x0a01, []byte("p384"), 1, commands.CapabilityAsymmetricSignEcdsa, commands.AlgorithmP384))
	pk := send(commands.CreateGetPubKeyCommand(0x0a01)).(*commands.GetPubKeyResponse)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P384(), append([]byte{4}, pk.KeyData...))
	if err != nil || pk.Algorithm != commands.AlgorithmP384 {
		t.Fatalf("P-384 public key %x (algorithm %d): %v", pk.KeyData, pk.Algorithm, err)
	}
	d384 := sha512.Sum384(msg)
	sig := send(commands.CreateSignDataEcdsaCommand(0x0a01, d384[:])).(*commands.SignDataEcdsaResponse)
	if !ecdsa.VerifyASN1(pub, d384[:], sig.Signature) {
		t.Fatal("P-384 signature does not verify")
	}

	priv384, _ := ecdsa.GenerateKey(elliptic.P384(), nil)
	scalar, _ := priv384.Bytes()
	put := send(commands.CreatePutAsymmetricKeyCommand(0x0a02, []byte("p384 put"), 1, commands.CapabilityAsymmetricSignEcdsa, commands.AlgorithmP384, scalar, nil)).(*commands.PutAsymmetricKeyResponse)
	pk = send(commands.CreateGetPubKeyCommand(put.KeyID)).(*commands.GetPubKeyResponse)
	if pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P384(), append([]byte{4}, pk.KeyData...)); err != nil || !pub.Equal(&priv384.PublicKey) {
		t.Fatal("the P-384 key put has another public key")
	}

	k1, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	k1d := k1.Key.Bytes()
	put = send(commands.CreatePutAsymmetricKeyCommand(0x0b01, []byte("k1"), 1, commands.CapabilityAsymmetricSignEcdsa, commands.AlgorithmSecp256k1, k1d[:], nil)).(*commands.PutAsymmetricKeyResponse)
	pk = send(commands.CreateGetPubKeyCommand(put.KeyID)).(*commands.GetPubKeyResponse)
	k1pub, err := secp256k1.ParsePubKey(append([]byte{4}, pk.KeyData...))
	if err != nil || !k1pub.IsEqual(k1.PubKey()) {
		t.Fatalf("secp256k1 public key %x: %v", pk.KeyData, err)
	}
	d256 := sha256.Sum256(msg)
	halfN := new(big.Int).Rsh(secp256k1.Params().N, 1)
	var high, low int
	for range 24 {
		sig := send(commands.CreateSignDataEcdsaCommand(put.KeyID, d256[:])).(*commands.SignDataEcdsaResponse)
		parsed, err := k1ecdsa.ParseDERSignature(sig.Signature)
		if err != nil || !parsed.Verify(d256[:], k1pub) {
			t.Fatalf("secp256k1 signature %x does not verify (%v)", sig.Signature, err)
		}
		var v struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig.Signature, &v); err != nil {
			t.Fatal(err)
		}
		if v.S.Cmp(halfN) > 0 {
			high++
		} else {
			low++
		}
	}
	if high == 0 || low == 0 {
		t.Errorf("24 secp256k1 signatures: %d high-S, %d low-S; a device leaves S as it comes", high, low)
	}

	send(commands.CreateGenerateAsymmetricKeyCommand(0x0b02, []byte("k1 gen"), 1, commands.CapabilityAsymmetricSignEcdsa, commands.AlgorithmSecp256k1))
	pk = send(commands.CreateGetPubKeyCommand(0x0b02)).(*commands.GetPubKeyResponse)
	if _, err := secp256k1.ParsePubKey(append([]byte{4}, pk.KeyData...)); err != nil {
		t.Fatalf("generated secp256k1 key: %v", err)
	}
}

// TestYubihsmGoRSA: RSA keys of 2048, 3072 and 4096 bits put with
// yubihsm-go (p ‖ q) give their modulus, and Sign PKCS1 over a SHA-256,
// SHA-384 or SHA-512 digest verifies with crypto/rsa.
func TestYubihsmGoRSA(t *testing.T) {
	send := goSession(t)
	msg := []byte("a certificate to sign")
	for i, tc := range []struct {
		bits int
		alg  commands.Algorithm
		hash crypto.Hash
	}{
		{2048, commands.AlgorithmRSA2048, crypto.SHA256},
		{3072, commands.AlgorithmRSA3072, crypto.SHA384},
		{4096, commands.AlgorithmRSA4096, crypto.SHA512},
	} {
		k := yubihsmsim.RSATestKey(t, tc.bits)
		half := tc.bits / 16
		p, q := k.Primes[0].FillBytes(make([]byte, half)), k.Primes[1].FillBytes(make([]byte, half))
		id := uint16(0x0c01 + i)
		send(commands.CreatePutAsymmetricKeyCommand(id, []byte("rsa"), 1, commands.CapabilityAsymmetricSignPkcs, tc.alg, p, q))
		pk := send(commands.CreateGetPubKeyCommand(id)).(*commands.GetPubKeyResponse)
		if pk.Algorithm != tc.alg || new(big.Int).SetBytes(pk.KeyData).Cmp(k.N) != 0 || len(pk.KeyData) != tc.bits/8 {
			t.Fatalf("RSA-%d public key: algorithm %d, %d bytes", tc.bits, pk.Algorithm, len(pk.KeyData))
		}
		h := tc.hash.New()
		h.Write(msg)
		digest := h.Sum(nil)
		sig := send(commands.CreateSignDataPkcs1Command(id, digest)).(*commands.SignDataPkcs1Response)
		if err := rsa.VerifyPKCS1v15(&k.PublicKey, tc.hash, digest, sig.Signature); err != nil {
			t.Fatalf("RSA-%d PKCS#1 v1.5 signature: %v", tc.bits, err)
		}
	}
}
