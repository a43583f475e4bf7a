package yubihsm

import (
	"bytes"
	"context"
	"fmt"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

var _ signer.HealthChecker = (*Signer)(nil)

// healthPayload is what Health asks the device to echo.
var healthPayload = []byte("signerkit health")

// Health asks the device to echo a few bytes on one of the key's
// sessions (opening one if none is open, as a sign would): one
// authenticated round trip through the connector that signs nothing and
// changes nothing on the device. It waits for a free session within ctx,
// so with Config.Sessions 1 it waits for a sign in flight, and a sign
// waits for it.
//
// Errors are typed as SignContext's: a connector that does not answer
// or has no device wraps signer.ErrDisconnected, a device that did not
// answer in time wraps context.DeadlineExceeded, an echo that comes back
// different wraps signer.ErrProtocol, and after Close signer.ErrClosed.
func (k *Signer) Health(ctx context.Context) error {
	resp, err := k.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateEchoCommand(healthPayload)
	})
	if err != nil {
		return wrap(err, "health check of %04x", k.id)
	}
	if e, ok := resp.(*commands.EchoResponse); !ok || !bytes.Equal(e.Data, healthPayload) {
		return &protocolError{fmt.Sprintf("health check: Echo answered %T", resp)}
	}
	return nil
}
