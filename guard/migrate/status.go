package migrate

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrSignature is the error of Verify: the file's last signature is not
// the validator key's over its sign bytes.
var ErrSignature = errors.New("migrate: the state file's signature does not verify under the validator's public key")

// Verify checks the file's last signature, if it has one, under the
// validator's Ed25519 public key.
func (s State) Verify(pub ed25519.PublicKey) error {
	if s.SignBytes == nil {
		return nil
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, s.SignBytes, s.Signature) {
		return ErrSignature
	}
	return nil
}

// NodeStatus is what a node's RPC /status says of its chain.
type NodeStatus struct {
	// Network is the node's chain id.
	Network string
	// LatestHeight is the height of the latest block the node has.
	LatestHeight int64
	// CatchingUp is true while the node is still syncing.
	CatchingUp bool
}

// ErrNotStatus is wrapped by the error of a /status answer that is not
// one.
var ErrNotStatus = errors.New("migrate: not a node's /status answer")

// ParseStatus reads the JSON-RPC answer of a CometBFT or gno tm2 node's
// /status: result.node_info.network and result.sync_info's
// latest_block_height (a string in both) and catching_up.
func ParseStatus(b []byte) (NodeStatus, error) {
	if len(b) > MaxFileSize {
		return NodeStatus{}, fmt.Errorf("%w: %d bytes", ErrNotStatus, len(b))
	}
	var r struct {
		Result *struct {
			NodeInfo struct {
				Network string `json:"network"`
			} `json:"node_info"`
			SyncInfo map[string]json.RawMessage `json:"sync_info"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return NodeStatus{}, fmt.Errorf("%w: %v", ErrNotStatus, err)
	}
	if r.Result == nil {
		return NodeStatus{}, fmt.Errorf("%w: no result (error %s)", ErrNotStatus, r.Error)
	}
	h, err := intField(r.Result.SyncInfo, "latest_block_height", 1<<62)
	if err != nil {
		return NodeStatus{}, fmt.Errorf("%w: sync_info: %v", ErrNotStatus, err)
	}
	var catching bool
	if raw, ok := r.Result.SyncInfo["catching_up"]; ok {
		if err := json.Unmarshal(raw, &catching); err != nil {
			return NodeStatus{}, fmt.Errorf("%w: sync_info.catching_up: %v", ErrNotStatus, err)
		}
	}
	if r.Result.NodeInfo.Network == "" {
		return NodeStatus{}, fmt.Errorf("%w: no node_info.network", ErrNotStatus)
	}
	return NodeStatus{Network: r.Result.NodeInfo.Network, LatestHeight: h, CatchingUp: catching}, nil
}

// FetchStatus asks the node at base (its RPC address, e.g.
// http://127.0.0.1:26657) for its /status.
func FetchStatus(ctx context.Context, c *http.Client, base string) (NodeStatus, error) {
	if c == nil {
		c = http.DefaultClient
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/status", nil)
	if err != nil {
		return NodeStatus{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return NodeStatus{}, fmt.Errorf("migrate: node %s: %w", base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxFileSize+1))
	if err != nil {
		return NodeStatus{}, fmt.Errorf("migrate: node %s: %w", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		return NodeStatus{}, fmt.Errorf("migrate: node %s: /status: %s", base, resp.Status)
	}
	st, err := ParseStatus(b)
	if err != nil {
		return NodeStatus{}, fmt.Errorf("node %s: %w", base, err)
	}
	return st, nil
}
