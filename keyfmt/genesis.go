package keyfmt

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// GenesisValidator is one entry of a genesis file's "validators", in the
// shape both chains write (CometBFT's types.GenesisValidator, tm2's
// bft/types.GenesisValidator): power as a decimal string, as their JSON
// codecs write an int64.
type GenesisValidator struct {
	Address string     `json:"address"`
	PubKey  typedValue `json:"pub_key"`
	Power   string     `json:"power"`
	Name    string     `json:"name"`
}

// typedValue is an amino JSON interface value: CometBFT names its type in
// "type", tm2 in "@type".
type typedValue struct {
	Type      string `json:"type,omitempty"`
	AminoType string `json:"@type,omitempty"`
	Value     string `json:"value"`
}

// CometBFTGenesisValidator returns pub's entry for a CometBFT genesis
// file's "validators", as CometBFT's JSON codec writes it.
func CometBFTGenesisValidator(pub ed25519.PublicKey, power int64, name string) GenesisValidator {
	return GenesisValidator{
		Address: CometBFTAddress(pub),
		PubKey:  typedValue{Type: CometBFTPubKeyType, Value: base64.StdEncoding.EncodeToString(pub)},
		Power:   strconv.FormatInt(power, 10),
		Name:    name,
	}
}

// GnoGenesisValidator returns pub's entry for a gno genesis file's
// "validators", as tm2's amino JSON writes it.
func GnoGenesisValidator(pub ed25519.PublicKey, power int64, name string) GenesisValidator {
	return GenesisValidator{
		Address: GnoAddress(pub),
		PubKey:  typedValue{AminoType: GnoPubKeyType, Value: base64.StdEncoding.EncodeToString(pub)},
		Power:   strconv.FormatInt(power, 10),
		Name:    name,
	}
}

// JSON returns v indented by two spaces, as both chains write genesis
// files.
func (v GenesisValidator) JSON() []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // strings only
	}
	return b
}
