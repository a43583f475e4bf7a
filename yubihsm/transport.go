package yubihsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/connector"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// transport talks to a yubihsm-connector over HTTP (docs/protocols.md B.6).
type transport struct {
	base, api, status string
	client            *http.Client
	own               *http.Transport // closed on Close when we made it
}

// maxResponseHeader bounds the response headers the package's own client
// reads: a yubihsm-connector sends a few hundred bytes.
const maxResponseHeader = 16 << 10

// newTransport returns a transport to the connector at connector, through
// hc when it is set. timeout bounds every request, whichever client
// carries it: a copy of hc gets it as its Timeout, unless hc has a shorter
// one. net/http then bounds each request, and leaves its context the
// caller's when the caller's deadline is the earlier one.
func newTransport(connector string, hc *http.Client, timeout time.Duration) (*transport, error) {
	base, err := connectorURL(connector)
	if err != nil {
		return nil, fmt.Errorf("yubihsm: connector URL: %s: %w", err, signer.ErrInvalidArgument)
	}
	t := &transport{base: base, api: base + "/connector/api", status: base + "/connector/status"}
	if hc != nil {
		c := *hc
		if c.Timeout <= 0 || c.Timeout > timeout {
			c.Timeout = timeout
		}
		t.client = &c
	} else {
		t.own = &http.Transport{
			Proxy:                  nil, // the connector is local; never send frames through a proxy
			DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:           32,
			MaxIdleConnsPerHost:    32,
			IdleConnTimeout:        60 * time.Second,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: maxResponseHeader,
		}
		t.client = &http.Client{Transport: t.own, Timeout: timeout}
	}
	return t, nil
}

func (t *transport) close() {
	if t.own != nil {
		t.own.CloseIdleConnections()
	}
}

// call is the per-request context of an exchange: the caller's context and
// trace, and the measured stage the exchange belongs to (StageTransport
// for a command, StageSession while a session is set up, when the
// exchange's own time is part of the session stage).
type call struct {
	ctx   context.Context
	tr    *signertrace.Trace
	stage signertrace.Stage
}

// transportError is a failure to reach the device through the connector.
type transportError struct {
	err    error
	status int // HTTP status, 0 when there was no answer
}

func (e *transportError) Error() string {
	if e.status != 0 {
		return fmt.Sprintf("yubihsm: connector answered HTTP %d", e.status)
	}
	return "yubihsm: connector: " + e.err.Error()
}

func (e *transportError) Unwrap() []error {
	if e.status != 0 {
		return []error{signer.ErrDisconnected}
	}
	return []error{e.err, signer.ErrDisconnected}
}

// exchange posts one frame and returns the response body, reporting bytes,
// round trips and transport time.
func (t *transport) exchange(c call, frame []byte) ([]byte, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, fmt.Errorf("yubihsm: connector: %w", err)
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, t.api, bytes.NewReader(frame))
	if err != nil {
		return nil, fmt.Errorf("yubihsm: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	start := c.tr.Start()
	c.tr.Add(signertrace.CountRoundTrips, 1)
	c.tr.Add(signertrace.CountBytesOut, int64(len(frame)))
	resp, err := t.client.Do(req)
	if err != nil {
		// The caller's context ending is the caller's error; the request
		// timeout expiring is a connector that did not answer in time
		// (which still wraps context.DeadlineExceeded).
		if ctxErr := c.ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("yubihsm: connector: %w", ctxErr)
		}
		var de *DeadlineError
		if errors.As(err, &de) {
			if c.stage == signertrace.StageTransport {
				c.tr.Measured(signertrace.StageTransport, start)
			}
			return nil, de
		}
		return nil, &transportError{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, scp03.MaxFrame+1))
	if c.stage == signertrace.StageTransport {
		c.tr.Measured(signertrace.StageTransport, start)
	}
	c.tr.Add(signertrace.CountBytesIn, int64(len(body)))
	if err != nil {
		if ctxErr := c.ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("yubihsm: connector: %w", ctxErr)
		}
		return nil, &transportError{err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &transportError{status: resp.StatusCode}
	}
	return body, nil
}

// DeadlineError says that the device could not have answered a command
// by the caller's deadline, as the HTTPClient that carried it judged in
// the device's modeled time: the device did run the command, and a real
// one would still have been busy when the caller gave up. The caller's
// trace has the modeled time up to the deadline. It unwraps to
// context.DeadlineExceeded.
//
// A command fails with it when Config.HTTPClient fails the request with an
// error that wraps one, as the client of yubihsm/yubihsmsim does in its
// accounted time mode; a real connector never causes it. Like any other
// unanswered command, it costs the session.
type DeadlineError struct {
	// Modeled is the command's modeled device time, and Accounted the
	// part of it before the deadline.
	Modeled, Accounted time.Duration
}

// Error describes the timeout in modeled time.
func (e *DeadlineError) Error() string {
	return fmt.Sprintf("yubihsm: the device needed %v of modeled time, %v of it before the deadline: %v", e.Modeled, e.Accounted, context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// Status is what the connector reports about itself and its device.
type Status struct {
	// OK says whether a device is attached (the connector's status=OK).
	OK bool
	// Serial is the device's serial number, or "*" when there is none.
	Serial string
	// Version is the connector's version.
	Version string
}

func (t *transport) getStatus(ctx context.Context) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.status, nil)
	if err != nil {
		return Status{}, fmt.Errorf("yubihsm: %w", err)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Status{}, fmt.Errorf("yubihsm: connector status: %w", ctxErr)
		}
		return Status{}, fmt.Errorf("yubihsm: connector status: %v: %w", err, signer.ErrDeviceNotFound)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Status{}, fmt.Errorf("yubihsm: connector status: HTTP %d: %w", resp.StatusCode, signer.ErrDeviceNotFound)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Status{}, fmt.Errorf("yubihsm: connector status: %w", ctxErr)
		}
		return Status{}, fmt.Errorf("yubihsm: connector status: %v: %w", err, signer.ErrDeviceNotFound)
	}
	return parseStatus(body)
}

// parseStatus reads the connector's key=value lines.
func parseStatus(body []byte) (Status, error) {
	var s Status
	seen := false
	for _, line := range strings.Split(string(body), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "status":
			s.OK, seen = v == "OK", true
		case "serial":
			s.Serial = v
		case "version":
			s.Version = v
		}
	}
	if !seen {
		return Status{}, fmt.Errorf("yubihsm: connector status has no status line: %w", signer.ErrProtocol)
	}
	return s, nil
}

// protocolError is a response that breaks the frame format.
type protocolError struct{ what string }

func (e *protocolError) Error() string { return "yubihsm: bad response: " + e.what }
func (e *protocolError) Unwrap() error { return signer.ErrProtocol }

// checkResponse validates a response frame to a command with code cmd
// before yubihsm-go's parser sees it: that parser panics on short session
// messages and device info (docs/protocols.md B.7). An error frame becomes a
// *DeviceError.
func checkResponse(cmd byte, b []byte) error {
	f, err := scp03.ParseFrame(b)
	if err != nil {
		return &protocolError{err.Error()}
	}
	switch f.Cmd {
	case 0x7f:
		if len(f.Payload) != 1 {
			return &protocolError{fmt.Sprintf("error frame with a %d-byte payload", len(f.Payload))}
		}
		return &DeviceError{Code: ErrorCode(f.Payload[0]), Command: cmd}
	case cmd | 0x80:
	default:
		return &protocolError{fmt.Sprintf("response 0x%02x to command 0x%02x", f.Cmd, cmd)}
	}
	n := len(f.Payload)
	switch cmd {
	case byte(commands.CommandTypeCreateSession):
		if n != 1+2*scp03.ChallengeLen {
			return &protocolError{fmt.Sprintf("create session payload of %d bytes", n)}
		}
	case byte(commands.CommandTypeSessionMessage):
		if n < 1+16+scp03.MACLen || (n-1-scp03.MACLen)%16 != 0 {
			return &protocolError{fmt.Sprintf("session message payload of %d bytes", n)}
		}
	case byte(commands.CommandTypeDeviceInfo):
		if n < 9 {
			return &protocolError{fmt.Sprintf("device info payload of %d bytes", n)}
		}
	}
	return nil
}

// conn adapts the transport to yubihsm-go's connector.Connector for one
// session, carrying the current call's context, which yubihsm-go's
// interface has no room for. The session's lock guards it.
type conn struct {
	t     *transport
	call  call
	sid   byte // the session's id once known, checked on every response
	sidOK bool
	// answered is set when the connector returned a response body.
	answered bool
	// last is the last response frame, for readRaw.
	last []byte
}

var _ connector.Connector = (*conn)(nil)

// Request sends a command and returns its validated response.
func (c *conn) Request(cmd *commands.CommandMessage) ([]byte, error) {
	frame, err := cmd.Serialize()
	if err != nil {
		return nil, fmt.Errorf("yubihsm: %w", err)
	}
	if len(frame) > scp03.MaxFrame {
		return nil, fmt.Errorf("yubihsm: %d-byte frame exceeds the device's buffer: %w", len(frame), signer.ErrMessageTooLarge)
	}
	resp, err := c.t.exchange(c.call, frame)
	if err != nil {
		return nil, err
	}
	c.answered = true
	c.last = resp
	if err := checkResponse(frame[0], resp); err != nil {
		return nil, err
	}
	// yubihsm-go does not compare the session id of a response with its
	// own (docs/protocols.md B.7); a response for another session must not be
	// taken for ours.
	if frame[0] == byte(commands.CommandTypeSessionMessage) && c.sidOK && resp[3] != c.sid {
		return nil, &protocolError{fmt.Sprintf("response for session %d on session %d", resp[3], c.sid)}
	}
	return resp, nil
}

// GetStatus reports the connector's status in yubihsm-go's form.
func (c *conn) GetStatus() (*connector.StatusResponse, error) {
	s, err := c.t.getStatus(c.call.ctx)
	if err != nil {
		return nil, err
	}
	st := connector.Status("NO_DEVICE")
	if s.OK {
		st = "OK"
	}
	return &connector.StatusResponse{Status: st, Serial: s.Serial, Version: s.Version}, nil
}
