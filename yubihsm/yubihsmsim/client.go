package yubihsmsim

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
)

// The headers of the deadline exchange between HTTPClient and the
// simulator's connector (Handler).
const (
	// timeLeftHeader carries the time left before the caller's deadline,
	// less the modeled time already accounted under it, in nanoseconds.
	timeLeftHeader = "X-Signerkit-Time-Left"
	// deadlineExceededHeader, on a 504 answer, carries the command's full
	// modeled time in nanoseconds; simtime.Header carries the part
	// accounted before the deadline.
	deadlineExceededHeader = "X-Signerkit-Deadline-Exceeded"
)

// The commands of session setup, whose exchanges the yubihsm client
// times as its session stage rather than as transport.
const (
	cmdCreateSession       = 0x03
	cmdAuthenticateSession = 0x04
)

// HTTPClient returns a client for yubihsm.Config.HTTPClient that talks to
// this simulator's connector (Device.Handler, cmd/yubihsmsim) in
// signerkit's extension of the connector protocol:
//   - the simulator's modeled device time, which it sends back in the
//     X-Signerkit-Modeled response header of a successful command, is
//     reported on the caller's signertrace.Trace, within bounds (at most 8
//     stages of at most 256 bytes and 10 minutes each; a header beyond
//     them is ignored whole);
//   - each command carries the time the caller's deadline leaves (the
//     X-Signerkit-Time-Left request header, less the modeled time already
//     reported under the caller's context), so that a simulator that only
//     accounts its modeled time (Accounted) can fail a command that would
//     run past the deadline. The request then fails with a
//     *yubihsm.DeadlineError, which the yubihsm client returns as the
//     command's error; it wraps context.DeadlineExceeded.
//
// The deadline a command carries is its request's: the caller's, or
// yubihsm.Config.RequestTimeout from now when that comes first. Point it
// only at a simulator you trust: whatever answers at the connector URL
// could put forged times in the caller's traces and metrics. A real
// yubihsm-connector ignores the header and sends none back, so the client
// works with one, adding nothing. Each call returns a client with its own
// connections, which never go through a proxy.
func HTTPClient() *http.Client {
	return &http.Client{Transport: NewTransport(nil)}
}

// NewTransport returns the http.RoundTripper of HTTPClient over base,
// which carries the requests: for a client of one's own (a larger header
// limit, a recording relay). A nil base means connections of its own, as
// HTTPClient's.
func NewTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = newBase()
	}
	return &clientTransport{base: base}
}

// newBase returns a transport configured as the yubihsm package's own:
// no proxy, 16 KiB of response headers at most.
func newBase() *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // the connector is local
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
	}
}

// clientTransport is HTTPClient's RoundTripper.
type clientTransport struct {
	base http.RoundTripper
}

// RoundTrip sends req with the time its deadline leaves and reports the
// modeled time of the answer.
func (t *clientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	within := sessionSetup(req)
	if deadline, ok := ctx.Deadline(); ok && req.Method == http.MethodPost {
		left := max(time.Until(deadline)-simtime.AccountedUnder(ctx), 0)
		req = req.Clone(ctx)
		req.Header.Set(timeLeftHeader, strconv.FormatInt(int64(left), 10))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if v := resp.Header.Get(deadlineExceededHeader); v != "" && resp.StatusCode == http.StatusGatewayTimeout {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, deadlineExceeded(ctx, resp.Header, v, within)
	}
	if resp.StatusCode == http.StatusOK {
		reportModeled(ctx, resp.Header, within)
	}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of its base, if it
// has any.
func (t *clientTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// sessionSetup returns signertrace.StageSession for a request that sets up a
// session, which the yubihsm client times as a whole, and zero (the
// transport) for any other.
func sessionSetup(req *http.Request) signertrace.Stage {
	if req.GetBody == nil {
		return 0
	}
	body, err := req.GetBody()
	if err != nil {
		return 0
	}
	defer body.Close()
	var cmd [1]byte
	if _, err := io.ReadFull(body, cmd[:]); err != nil {
		return 0
	}
	if cmd[0] == cmdCreateSession || cmd[0] == cmdAuthenticateSession {
		return signertrace.StageSession
	}
	return 0
}

// deadlineExceeded reports the modeled time the simulator accounted before
// the caller's deadline and returns the command's error.
func deadlineExceeded(ctx context.Context, h http.Header, modeled string, within signertrace.Stage) error {
	e := &yubihsm.DeadlineError{}
	if n, err := strconv.ParseInt(modeled, 10, 64); err == nil && n > 0 && n <= int64(simtime.MaxStageDuration) {
		e.Modeled = time.Duration(n)
	}
	for _, s := range reportModeled(ctx, h, within) {
		e.Accounted += s.Duration
	}
	return e
}

// reportModeled reports the modeled stages the simulator sent in its
// response header, which simtime.Decode bounds (entries, their length and
// each duration); a header beyond those bounds is ignored whole. Accounted
// (not slept) time also counts against the caller's deadline for its next
// commands. It returns the stages.
func reportModeled(ctx context.Context, h http.Header, within signertrace.Stage) []signertrace.StageInfo {
	v := h.Get(simtime.Header)
	if v == "" {
		return nil
	}
	stages, err := simtime.Decode(v)
	if err != nil {
		return nil
	}
	tr := signertrace.ContextTrace(ctx)
	for _, s := range stages {
		if !s.Slept {
			simtime.Account(ctx, s.Duration)
		} else {
			s.Within = within
		}
		tr.Report(s)
	}
	return stages
}
