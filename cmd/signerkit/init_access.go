package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/daemon"
)

// initAccess holds init's flags that would otherwise be edited into the
// config by hand: the chain id read from the node's genesis, and the
// validator's allow and allow_any.
type initAccess struct {
	genesis  string
	allow    string
	allowAny bool
	entries  []string
}

func initAccessFlags(fs *flag.FlagSet) *initAccess {
	a := &initAccess{}
	fs.StringVar(&a.genesis, "genesis", "", "the node's genesis.json (CometBFT or gno): the chain id is read from it, in place of -chain")
	fs.StringVar(&a.allow, "allow", "", "the node identities served over TCP, comma-separated: gpub1…, ed25519:<hex|base64>, or the path of the node's node_key.json")
	fs.BoolVar(&a.allowAny, "allow-any", false, "serve any node identity over TCP: a stock CometBFT node, whose identity is new at every start, on a private address only (docs/identity.md)")
	return a
}

// resolve reads the genesis into *chain, which -chain may also name (then
// they must agree), and makes the allow entries that name files absolute.
func (a *initAccess) resolve(fs *flag.FlagSet, chain *string) error {
	if a.genesis != "" {
		id, err := genesisChainID(a.genesis)
		if err != nil {
			return err
		}
		chainSet := false
		fs.Visit(func(f *flag.Flag) { chainSet = chainSet || f.Name == "chain" })
		if chainSet && *chain != id {
			return fmt.Errorf("-chain %q, but %s is chain %q", *chain, a.genesis, id)
		}
		*chain = id
	}
	for _, e := range strings.Split(a.allow, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		// Checked now, as start will read it, so that init never writes a
		// config that start refuses.
		if _, err := daemon.ParseIdentityKey(e); err != nil {
			return fmt.Errorf("-allow %q: %w", e, err)
		}
		if _, err := os.Stat(e); err == nil {
			if e, err = filepath.Abs(e); err != nil {
				return err
			}
		}
		a.entries = append(a.entries, e)
	}
	if a.allowAny && len(a.entries) > 0 {
		return errors.New("-allow and -allow-any: give one (allow_any serves any identity, which makes the list moot)")
	}
	return nil
}

// allowTOML is the entries as the inside of a TOML array.
func (a *initAccess) allowTOML() string {
	if a == nil {
		return ""
	}
	q := make([]string, len(a.entries))
	for i, e := range a.entries {
		q[i] = strconv.Quote(e)
	}
	return strings.Join(q, ", ")
}

// genesisChainID reads chain_id from a CometBFT or gno genesis file.
func genesisChainID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("-genesis: %w", err)
	}
	id, err := parseGenesisChainID(b)
	if err != nil {
		return "", fmt.Errorf("-genesis %s: %w", path, err)
	}
	return id, nil
}

// errNotGenesis is returned for a file that is not a genesis with a
// usable chain_id.
var errNotGenesis = errors.New("not a genesis file")

// parseGenesisChainID reads the chain_id of a genesis file's contents: a
// JSON object with a non-empty string chain_id of at most 50 bytes of
// printable ASCII, as CometBFT's and gno's genesis checks require.
func parseGenesisChainID(b []byte) (string, error) {
	var g struct {
		ChainID string `json:"chain_id"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return "", fmt.Errorf("%w: %v", errNotGenesis, err)
	}
	if g.ChainID == "" {
		return "", fmt.Errorf("%w: no chain_id", errNotGenesis)
	}
	if len(g.ChainID) > 50 {
		return "", fmt.Errorf("%w: chain_id is %d bytes, more than 50", errNotGenesis, len(g.ChainID))
	}
	for _, c := range []byte(g.ChainID) {
		if c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("%w: chain_id %q has a character that is not printable ASCII", errNotGenesis, g.ChainID)
		}
	}
	return g.ChainID, nil
}
