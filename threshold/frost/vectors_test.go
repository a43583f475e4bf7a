package frost

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"filippo.io/edwards25519"
)

type vectorFile struct {
	Config struct {
		MaxParticipants string `json:"MAX_PARTICIPANTS"`
		MinParticipants string `json:"MIN_PARTICIPANTS"`
	} `json:"config"`
	Inputs struct {
		ParticipantList   []int    `json:"participant_list"`
		GroupSecretKey    string   `json:"group_secret_key"`
		GroupPublicKey    string   `json:"group_public_key"`
		Message           string   `json:"message"`
		Coefficients      []string `json:"share_polynomial_coefficients"`
		ParticipantShares []struct {
			Identifier int    `json:"identifier"`
			Share      string `json:"participant_share"`
		} `json:"participant_shares"`
	} `json:"inputs"`
	RoundOne struct {
		Outputs []struct {
			Identifier         int    `json:"identifier"`
			HidingRandomness   string `json:"hiding_nonce_randomness"`
			BindingRandomness  string `json:"binding_nonce_randomness"`
			HidingNonce        string `json:"hiding_nonce"`
			BindingNonce       string `json:"binding_nonce"`
			HidingCommitment   string `json:"hiding_nonce_commitment"`
			BindingCommitment  string `json:"binding_nonce_commitment"`
			BindingFactorInput string `json:"binding_factor_input"`
			BindingFactor      string `json:"binding_factor"`
		} `json:"outputs"`
	} `json:"round_one_outputs"`
	RoundTwo struct {
		Outputs []struct {
			Identifier int    `json:"identifier"`
			SigShare   string `json:"sig_share"`
		} `json:"outputs"`
	} `json:"round_two_outputs"`
	Final struct {
		Sig string `json:"sig"`
	} `json:"final_output"`
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scalarHex(t *testing.T, s string) *edwards25519.Scalar {
	t.Helper()
	v, err := deserializeScalar(unhex(t, s))
	if err != nil {
		t.Fatalf("scalar %s: %v", s, err)
	}
	return v
}

// TestRFC9591Vectors runs the FROST(Ed25519, SHA-512) vector of RFC 9591
// appendix E.1 step by step: dealer shares from the given coefficients,
// nonces from the given randomness, commitments, binding factor inputs and
// factors, the group commitment, each signature share and the signature.
func TestRFC9591Vectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/frost-ed25519-sha512.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	in := v.Inputs
	if v.Config.MaxParticipants != "3" || v.Config.MinParticipants != "2" {
		t.Fatalf("unexpected config %+v", v.Config)
	}
	secret := scalarHex(t, in.GroupSecretKey)
	var coeffs []*edwards25519.Scalar
	for _, c := range in.Coefficients {
		coeffs = append(coeffs, scalarHex(t, c))
	}
	dealt, err := split(secret, coeffs, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(dealt.Public.GroupPublicKey()); got != in.GroupPublicKey {
		t.Fatalf("group public key %s, want %s", got, in.GroupPublicKey)
	}
	keys := map[Identifier]*KeyPackage{}
	for i, ps := range in.ParticipantShares {
		kp := dealt.Shares[i]
		if int(kp.ID()) != ps.Identifier || hex.EncodeToString(kp.SecretShare()) != ps.Share {
			t.Fatalf("participant %d: share %x, want %s", ps.Identifier, kp.SecretShare(), ps.Share)
		}
		// A participant receiving this share checks it (vss_verify).
		if _, err := NewKeyPackage(kp.ID(), unhex(t, ps.Share), dealt.Commitment); err != nil {
			t.Fatalf("participant %d: vss_verify: %v", ps.Identifier, err)
		}
		keys[kp.ID()] = kp
	}
	msg := unhex(t, in.Message)

	var list []SigningCommitments
	nonces := map[Identifier]*SigningNonces{}
	for _, o := range v.RoundOne.Outputs {
		id := Identifier(o.Identifier)
		n := commitWith(id, keys[id].secret, unhex(t, o.HidingRandomness), unhex(t, o.BindingRandomness))
		for _, c := range []struct {
			name, got, want string
		}{
			{"hiding nonce", hex.EncodeToString(n.hiding.Bytes()), o.HidingNonce},
			{"binding nonce", hex.EncodeToString(n.binding.Bytes()), o.BindingNonce},
			{"hiding commitment", hex.EncodeToString(n.commitments.Hiding.Bytes()), o.HidingCommitment},
			{"binding commitment", hex.EncodeToString(n.commitments.Binding.Bytes()), o.BindingCommitment},
		} {
			if c.got != c.want {
				t.Errorf("participant %d: %s %s, want %s", id, c.name, c.got, c.want)
			}
		}
		nonces[id] = n
		list = append(list, n.Commitments())
	}
	inputs := bindingFactorInputs(dealt.Public.group.Bytes(), list, encodeGroupCommitmentList(list), msg)
	s := newSession(dealt.Public.group, list, msg)
	for i, o := range v.RoundOne.Outputs {
		if got := hex.EncodeToString(inputs[i]); got != o.BindingFactorInput {
			t.Errorf("participant %d: binding factor input\n%s, want\n%s", o.Identifier, got, o.BindingFactorInput)
		}
		if got := hex.EncodeToString(s.binding[i].Bytes()); got != o.BindingFactor {
			t.Errorf("participant %d: binding factor %s, want %s", o.Identifier, got, o.BindingFactor)
		}
	}
	wantSig := unhex(t, v.Final.Sig)
	if got := s.groupComm.Bytes(); !bytes.Equal(got, wantSig[:32]) {
		t.Errorf("group commitment %x, want %x", got, wantSig[:32])
	}

	var shares []SignatureShare
	for _, o := range v.RoundTwo.Outputs {
		id := Identifier(o.Identifier)
		sh, err := Sign(keys[id], nonces[id], msg, list)
		if err != nil {
			t.Fatalf("participant %d: sign: %v", id, err)
		}
		if got := hex.EncodeToString(sh.Z.Bytes()); got != o.SigShare {
			t.Errorf("participant %d: signature share %s, want %s", id, got, o.SigShare)
		}
		if err := VerifySignatureShare(dealt.Public, sh, msg, list); err != nil {
			t.Errorf("participant %d: verify_signature_share: %v", id, err)
		}
		shares = append(shares, sh)
	}
	sig, err := Aggregate(dealt.Public, msg, list, shares)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sig, wantSig) {
		t.Errorf("signature %x, want %x", sig, wantSig)
	}
	if !ed25519.Verify(unhex(t, in.GroupPublicKey), msg, sig) {
		t.Error("the vector's signature does not verify with crypto/ed25519")
	}
	// Both nonces were consumed by Sign.
	for id, n := range nonces {
		if !n.wiped() {
			t.Errorf("participant %d: nonces not wiped after Sign", id)
		}
		if _, err := Sign(keys[id], n, msg, list); err == nil {
			t.Errorf("participant %d: a second Sign with the same nonces succeeded", id)
		}
	}
}
