package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func init() {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		// A simulated YubiHSM 2 behind a loopback connector: SCP03 and
		// HTTP are real and measured; device time is modeled from
		// docs/latency-profiles.md §2 (accounted, or slept with
		// SIGNERKIT_SIM=realtime).
		Register(Backend{Name: "yubihsm-" + alg.String(), Algorithm: alg, Open: openYubiHSMSim(alg), Traced: true, Validator: alg == signer.Ed25519, Payloads: yubihsmPayloads,
			Stages: []signertrace.Stage{signertrace.StageSession}})
		// A real YubiHSM 2, when SIGNERKIT_YUBIHSM names its connector.
		Register(Backend{
			Name: "yubihsm-device-" + alg.String(), Algorithm: alg, Open: openYubiHSMDevice(alg), Traced: true, Validator: alg == signer.Ed25519,
			Stages: []signertrace.Stage{signertrace.StageSession},
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
		// The zero Config.Time accounts modeled time, or sleeps it with
		// SIGNERKIT_SIM=realtime.
		srv, err := yubihsmsim.NewServer(yubihsmsim.New(yubihsmsim.Config{}))
		if err != nil {
			return nil, err
		}
		inst, err := openYubiHSM(ctx, alg, srv.URL(), signer.SecretBytes([]byte("password")), yubihsmsim.HTTPClient())
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
		secret := signer.SecretBytes([]byte("password"))
		if os.Getenv("SIGNERKIT_YUBIHSM_PASSWORD") != "" {
			secret = signer.SecretEnv("SIGNERKIT_YUBIHSM_PASSWORD")
		}
		return openYubiHSM(ctx, alg, os.Getenv("SIGNERKIT_YUBIHSM"), secret, nil)
	}
}

// openYubiHSM generates a key for the row and deletes it when the row
// closes. hc is the simulator's HTTPClient, which reports its modeled
// device time, or nil for a real connector.
func openYubiHSM(ctx context.Context, alg signer.Algorithm, connector string, secret signer.Secret, hc *http.Client) (*Instance, error) {
	st, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: connector, Secret: secret, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	ki, err := st.GenerateKey(ctx, alg, fmt.Sprintf("signerkit-bench-%s-%d", alg, os.Getpid()))
	if err != nil {
		st.Close()
		return nil, err
	}
	k, err := st.OpenKey(ctx, ki.Ref())
	if err != nil {
		st.DeleteKey(ctx, ki.Ref())
		st.Close()
		return nil, err
	}
	inst := FromSigner(k)
	inst.Close = func() error {
		err := k.Close()
		st.DeleteKey(context.Background(), ki.Ref())
		st.Close()
		return err
	}
	return inst, nil
}
