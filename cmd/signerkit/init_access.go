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
	var g struct {
		ChainID string `json:"chain_id"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return "", fmt.Errorf("-genesis %s: not a genesis file: %v", path, err)
	}
	if g.ChainID == "" {
		return "", fmt.Errorf("-genesis %s: no chain_id", path)
	}
	return g.ChainID, nil
}
