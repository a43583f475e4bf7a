package yubihsmsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/internal/simtime"
)

// ConnectorVersion is the yubihsm-connector version the status reports.
const ConnectorVersion = "3.0.4"

// Handler returns the device served as yubihsm-connector serves a YubiHSM 2
// (docs/protocols.md B.6): POST /connector/api takes one command frame of 3 to
// 3139 bytes and answers 200 with the response frame (400 for a body out
// of range, 405 for another method, 500 when the device is unplugged);
// GET /connector/status answers the connector's text/plain status. Modeled
// device time travels back in the X-Signerkit-Modeled response header. In
// Accounted mode a request's X-Signerkit-Time-Left header (nanoseconds, as
// HTTPClient sends it) bounds the
// command's modeled time: a command that would run past it is executed
// and answered 504, with X-Signerkit-Deadline-Exceeded (its full modeled
// time in nanoseconds) and the time accounted up to the deadline in
// X-Signerkit-Modeled.
func (d *Device) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/connector/api", d.serveAPI)
	mux.HandleFunc("/connector/status", d.serveStatus)
	return requestID(mux)
}

func requestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if id == "" {
			var b [16]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-ID", id)
		h.ServeHTTP(w, r)
	})
}

func (d *Device) serveAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength >= 0 && (r.ContentLength < 3 || r.ContentLength > scp03.MaxFrame) {
		http.Error(w, "bad content length", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, scp03.MaxFrame+1))
	if err != nil || len(body) < 3 || len(body) > scp03.MaxFrame {
		http.Error(w, "bad content length", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	if left, ok := timeLeft(r.Header); ok && d.mode != simtime.Realtime {
		// The caller's deadline bounds the modeled time only: waiting for
		// a hung device still ends when the caller hangs up, as with a
		// real connector, so the caller sees its own context's error.
		ctx = context.WithValue(ctx, modeledDeadlineKey{}, time.Now().Add(left))
	}
	resp, stages, err := d.Handle(ctx, body)
	var de *deadlineError
	if errors.As(err, &de) {
		// The caller's deadline fell within the command's modeled time:
		// the device has run the command, and the caller, which would have
		// given up waiting, gets no response.
		if len(stages) > 0 {
			w.Header().Set(simtime.Header, simtime.Encode(stages))
		}
		w.Header().Set(deadlineExceededHeader, strconv.FormatInt(int64(de.modeled), 10))
		http.Error(w, err.Error(), http.StatusGatewayTimeout)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if len(stages) > 0 {
		w.Header().Set(simtime.Header, simtime.Encode(stages))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
	w.Write(resp)
}

// timeLeft reads timeLeftHeader: a decimal count of nanoseconds, negative
// meaning none (the deadline has passed in modeled time).
func timeLeft(h http.Header) (time.Duration, bool) {
	v := h.Get(timeLeftHeader)
	if v == "" || len(v) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(max(n, 0)), true
}

func (d *Device) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	status, serial := "OK", fmt.Sprintf("%010d", d.serial)
	d.fmu.Lock()
	_, unplugged := d.faults[FaultUnplugged]
	d.fmu.Unlock()
	if unplugged {
		status, serial = "NO_DEVICE", "*"
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "status=%s\nserial=%s\nversion=%s\npid=%d\naddress=%s\nport=%s\n", status, serial, ConnectorVersion, 1, host, port)
}

// Server serves a Device on a loopback address, as a running
// yubihsm-connector would. It can be taken down and brought back on the
// same address, to simulate a connector that restarts.
type Server struct {
	dev  *Device
	addr string

	mu  sync.Mutex
	srv *http.Server
	wg  sync.WaitGroup
}

// NewServer serves d on a free port of 127.0.0.1.
func NewServer(d *Device) (*Server, error) {
	return Listen(d, "127.0.0.1:0")
}

// Listen serves d on addr, which should be a loopback address.
func Listen(d *Device, addr string) (*Server, error) {
	s := &Server{dev: d, addr: addr}
	if err := s.Up(); err != nil {
		return nil, err
	}
	return s, nil
}

// URL returns the connector's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// Device returns the served device.
func (s *Server) Device() *Device { return s.dev }

// Up starts serving, on the same address as before if the server was
// taken down.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("yubihsmsim: %w", err)
	}
	s.addr = ln.Addr().String()
	srv := &http.Server{Handler: s.dev.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second}
	s.srv = srv
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		srv.Serve(ln)
	}()
	return nil
}

// Down stops the connector: new connections are refused and open ones are
// cut.
func (s *Server) Down() error {
	srv := s.detach()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	s.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close stops the server for good.
func (s *Server) Close() error { return s.Down() }

// Shutdown stops the server, letting requests in flight finish within ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	srv := s.detach()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	s.wg.Wait()
	return err
}

// detach takes the running http.Server, if any, leaving the Server down
// for Up to bring back.
func (s *Server) detach() *http.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv := s.srv
	s.srv = nil
	return srv
}
