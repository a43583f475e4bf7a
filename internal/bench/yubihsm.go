package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func init() {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		// A simulated YubiHSM 2 behind a loopback connector: SCP03 and
		// HTTP are real and measured; device time is modeled from
		// latency-profiles.md §2 (accounted, or slept with
		// SIGNERKIT_SIM=realtime).
		Register(Backend{Name: "yubihsm-" + alg.String(), Algorithm: alg, Open: openYubiHSMSim(alg), Traced: true, Validator: alg == signer.Ed25519, Payloads: yubihsmPayloads,
			Stages: []signer.Stage{signer.StageSession}})
		// A real YubiHSM 2, when SIGNERKIT_YUBIHSM names its connector.
		Register(Backend{
			Name: "yubihsm-device-" + alg.String(), Algorithm: alg, Open: openYubiHSMDevice(alg), Traced: true, Validator: alg == signer.Ed25519,
			Stages: []signer.Stage{signer.StageSession},
			Skip: func() string {
				if os.Getenv("SIGNERKIT_YUBIHSM") == "" {
					return "SIGNERKIT_YUBIHSM is not set"
				}
				return ""
			},
		})
	}
}

// yubihsmPayloads is the payload table with a 108-byte row added: a tm2
// prevote, the size the latency analysis quotes (≈ 132 ms modeled).
var yubihsmPayloads = []int{32, 64, 108, 128, 256, 512, 1024}

func openYubiHSMSim(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		srv, err := yubihsmsim.NewServer(yubihsmsim.New(yubihsmsim.Config{Mode: simtime.ModeFromEnv()}))
		if err != nil {
			return nil, err
		}
		inst, err := openYubiHSM(ctx, alg, srv.URL(), []byte("password"))
		if err != nil {
			srv.Close()
			return nil, err
		}
		closeKey := inst.Close
		inst.Close = func() error {
			err := closeKey()
			srv.Close()
			return err
		}
		return inst, nil
	}
}

func openYubiHSMDevice(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		pw := os.Getenv("SIGNERKIT_YUBIHSM_PASSWORD")
		if pw == "" {
			pw = "password"
		}
		return openYubiHSM(ctx, alg, os.Getenv("SIGNERKIT_YUBIHSM"), []byte(pw))
	}
}

// openYubiHSM generates a key for the row and deletes it when the row
// closes.
func openYubiHSM(ctx context.Context, alg signer.Algorithm, url string, password []byte) (*Instance, error) {
	c, err := yubihsm.Open(ctx, yubihsm.Config{URL: url, Password: password})
	if err != nil {
		return nil, err
	}
	ki, err := c.GenerateKey(ctx, alg, fmt.Sprintf("signerkit-bench-%s-%d", alg, os.Getpid()))
	if err != nil {
		c.Close()
		return nil, err
	}
	k, err := c.Key(ctx, ki.Ref())
	if err != nil {
		c.DeleteKey(ctx, ki.Ref())
		c.Close()
		return nil, err
	}
	inst := FromSigner(k)
	inst.Close = func() error {
		err := k.Close()
		c.DeleteKey(context.Background(), ki.Ref())
		c.Close()
		return err
	}
	return inst, nil
}
