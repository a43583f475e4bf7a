package etcdstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The messages of etcd's v3 JSON gateway (the gRPC API's JSON mapping:
// bytes in base64, 64-bit integers as strings) that the store uses.
type (
	rangeReq struct {
		Key []byte `json:"key"`
	}
	keyValue struct {
		Key         []byte `json:"key"`
		ModRevision int64  `json:"mod_revision,string"`
		Value       []byte `json:"value"`
	}
	header struct {
		Revision int64 `json:"revision,string"`
	}
	rangeResp struct {
		Header header     `json:"header"`
		KVs    []keyValue `json:"kvs"`
	}
	compare struct {
		Target      string `json:"target"`
		Key         []byte `json:"key"`
		Result      string `json:"result"`
		ModRevision int64  `json:"mod_revision,string"`
	}
	putReq struct {
		Key   []byte `json:"key"`
		Value []byte `json:"value"`
	}
	requestOp struct {
		Put   *putReq   `json:"request_put,omitempty"`
		Range *rangeReq `json:"request_range,omitempty"`
	}
	txnReq struct {
		Compare []compare   `json:"compare"`
		Success []requestOp `json:"success"`
		Failure []requestOp `json:"failure"`
	}
	responseOp struct {
		Put *struct {
			Header header `json:"header"`
		} `json:"response_put"`
		Range *rangeResp `json:"response_range"`
	}
	txnResp struct {
		Header    header       `json:"header"`
		Succeeded bool         `json:"succeeded"`
		Responses []responseOp `json:"responses"`
	}
	gatewayError struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
)

// maxResponse bounds what is read of one answer: a range of one key
// holds one value of at most a few KiB.
const maxResponse = 1 << 20

// call posts req to path on endpoint and decodes the answer into resp,
// within attempt (and ctx).
func (s *Store) call(ctx context.Context, endpoint, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.attempt)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var ge gatewayError
		if json.Unmarshal(b, &ge) == nil && (ge.Message != "" || ge.Error != "") {
			return fmt.Errorf("%s: %s (code %d)", res.Status, firstOf(ge.Message, ge.Error), ge.Code)
		}
		return fmt.Errorf("%s", res.Status)
	}
	if err := json.Unmarshal(b, resp); err != nil {
		return fmt.Errorf("unreadable answer: %v", err)
	}
	return nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// do runs one call, trying the endpoints in turn, starting from the last
// one that answered, until one answers or ctx ends. Trying a Swap again
// on another member is safe: if the first try committed, the second's
// compare fails and returns the state the first wrote.
func (s *Store) do(ctx context.Context, path string, req, resp any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	var errs []error
	start := int(s.good.Load())
	for i := 0; ; i++ {
		n := (start + i) % len(s.endpoints)
		ep := s.endpoints[n]
		err := s.call(ctx, ep, path, req, resp)
		if err == nil {
			s.good.Store(int32(n))
			return nil
		}
		if len(errs) < 2*len(s.endpoints) {
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
		}
		if ctx.Err() != nil {
			return &UnavailableError{Errs: errs}
		}
		if n == (start+len(s.endpoints)-1)%len(s.endpoints) {
			// Every member was tried: wait a little before the next round.
			t := time.NewTimer(s.pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return &UnavailableError{Errs: errs}
			case <-t.C:
			}
		}
	}
}

// UnavailableError is etcd not answering within the request's deadline:
// every member unreachable, or none able to commit (no quorum). Errs
// holds what each try gave.
type UnavailableError struct {
	Errs []error
}

// Error describes the failure.
func (e *UnavailableError) Error() string {
	var b strings.Builder
	for i, err := range e.Errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return "etcd unavailable: " + b.String()
}

// Unwrap returns the tries' errors.
func (e *UnavailableError) Unwrap() []error { return e.Errs }
