package etcdstore_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestMain runs this test binary as a signer process when asked (see
// signerMain), else the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SK_ETCD_SIGNER") == "1" {
		os.Exit(signerMain())
	}
	os.Exit(m.Run())
}

// signerMain is a signer process of the checker: a Guard on the state in
// etcd (endpoints SK_EPS through its own proxies, TLS files SK_CA,
// SK_CERT, SK_KEY) over the shared key, serving lines "id hex(sign bytes)"
// read from stdin with "id ok hex(sign bytes) hex(signature)" or "id err
// message" on stdout, each sign within SK_DEADLINE.
func signerMain() int {
	tlsCfg, err := etcdstore.TLSFiles(os.Getenv("SK_CA"), os.Getenv("SK_CERT"), os.Getenv("SK_KEY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := etcdstore.New(etcdstore.Config{Endpoints: strings.Split(os.Getenv("SK_EPS"), ","), Prefix: "/checker",
		TLS: tlsCfg, AttemptTimeout: 300 * time.Millisecond, Pause: 20 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	g, err := guard.New(signertest.NewFake(42), guard.Config{Store: s, AutoInit: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	deadline, _ := time.ParseDuration(os.Getenv("SK_DEADLINE"))
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<16)
	for in.Scan() {
		id, hx, _ := strings.Cut(in.Text(), " ")
		b, err := hex.DecodeString(hx)
		if err != nil {
			return 2
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			r, err := g.SignBytes(ctx, b)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintf(out, "%s err %s\n", id, strconv.Quote(err.Error()))
			} else {
				fmt.Fprintf(out, "%s ok %x %x\n", id, r.SignBytes, r.Signature)
			}
			out.Flush()
		}()
	}
	return 0
}
