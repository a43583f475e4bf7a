package thresholdbench

import (
	"context"
	"flag"
	"fmt"
	"github.com/signerkit/signerkit/internal/benchtime"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/signerkit/signerkit/guard"
)

// smokePool is the pool of commitments per party when the rows run once
// each (-benchtime 1x, as CI's smoke run does): filling the measuring pool
// of DefaultPoolSize takes each fixture about a second of CPU, for rows
// that then sign once.
const smokePool = 64

// defaultBenchtime is how long each row runs unless -benchtime is given:
// `go test -bench=. ./...` runs every row of the repository within its
// budget of a few minutes on a 2-core machine, and go's default of 1 s a
// row would spend over a minute here alone. Pass -benchtime (and -count)
// for figures to quote; the report runs its rows at 1 s.
const defaultBenchtime = "100ms"

// defaultPool is the pool of commitments per party at the default
// benchtime: enough for 200 signs in flight, and filled in a fraction of
// the time DefaultPoolSize takes.
const defaultPool = 512

// benchtimeDefaulted records that TestMain set the benchtime.
var benchtimeDefaulted bool

func TestMain(m *testing.M) {
	benchtimeDefaulted = benchtime.Default(defaultBenchtime)
	os.Exit(m.Run())
}

// poolSize returns the pool size for the sign rows' fixtures.
func poolSize() int {
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		return smokePool
	}
	if benchtimeDefaulted {
		return defaultPool
	}
	return DefaultPoolSize
}

// BenchmarkThreshold runs every row. In the sign rows each party keeps its
// nonces in memory (store=mem), which leaves out the storage, or in a file
// synced before each share leaves it (store=dir), as deployed:
//
//	frost-2of3-ed25519/sign/store=mem/net=<profile>/inflight=<n>
//	frost-2of3-ed25519/sign/store=dir/net=<same-zone|transatlantic>/inflight=<n>
//	frost-2of3-ed25519/echo/net=<profile>
//	frost-2of3-ed25519/presign/commit
//	frost-2of3-ed25519/presign/store=<mem|dir>/batch=<n>
//	frost-2of3-ed25519/presign/net=<profile>/batch=<n>
//	frost-2of3-ed25519/compute/<party-share|coordinator-commitment|coordinator-aggregate>
//	frost-2of3-ed25519/dkg/inprocess
//	frost-2of3-ed25519/dkg/net=<profile>
func BenchmarkThreshold(b *testing.B) {
	b.Run(Row, func(b *testing.B) {
		b.Run("sign", func(b *testing.B) {
			// The fixtures of the rows that will run start together, at
			// most three at once, and are all ready, pools full, before
			// the first row: a fixture's start is round trips and filling
			// its pools, and one after another they took a second or so
			// each. Each sits idle until its rows.
			groups := signGroups()
			pending := make([]*pendingFixture, len(groups))
			slots := make(chan struct{}, 3) // so that no party's first presign request waits long for the CPU
			dir := b.TempDir()
			for i, g := range groups {
				if benchWillRun(b.Name(), "store="+g.store, "net="+g.net.Name) {
					pending[i] = startFixture(g.config(dir), slots)
				}
			}
			defer func() { // those no row took
				for _, p := range pending {
					if f, _ := p.wait(); f != nil {
						f.Close()
					}
				}
			}()
			for _, p := range pending {
				p.wait()
			}
			for _, store := range []string{"mem", "dir"} {
				b.Run("store="+store, func(b *testing.B) {
					for i, g := range groups {
						if g.store != store {
							continue
						}
						b.Run("net="+g.net.Name, func(b *testing.B) {
							p := pending[i]
							if p == nil { // benchWillRun did not expect this row
								p = startFixture(g.config(dir), make(chan struct{}, 1))
							}
							pending[i] = nil
							f, err := p.wait()
							if err != nil {
								b.Fatal(err)
							}
							defer f.Close()
							var height atomic.Int64
							height.Store(FirstHeight - 1)
							for _, k := range InFlight {
								b.Run(fmt.Sprintf("inflight=%d", k), func(b *testing.B) { Sign(b, f, k, &height) })
							}
						})
					}
				})
			}
		})
		for _, n := range Networks() {
			b.Run("echo/net="+n.Name, func(b *testing.B) { Echo(b, n) })
		}
		b.Run("presign", func(b *testing.B) {
			b.Run("commit", Commit)
			for _, batch := range []int{64, 1024} {
				b.Run(fmt.Sprintf("store=mem/batch=%d", batch), func(b *testing.B) {
					Generate(b, func() guard.FS { return &guard.MemFS{} }, batch)
				})
				b.Run(fmt.Sprintf("store=dir/batch=%d", batch), func(b *testing.B) {
					Generate(b, func() guard.FS { return guard.DirFS(b.TempDir()) }, batch)
				})
			}
			n, _ := NetworkNamed("same-zone")
			b.Run("net="+n.Name+"/batch=1024", func(b *testing.B) { PresignNet(b, n, 1024) })
		})
		b.Run("compute/party-share", PartyShare)
		b.Run("compute/coordinator-commitment", CoordinatorCommitment)
		b.Run("compute/coordinator-aggregate", CoordinatorAggregate)
		b.Run("dkg/inprocess", DKGInProcess)
		// Each row's mesh is connected before the first of these rows (the
		// meshes together: connecting one is mostly waiting for round
		// trips, sequentially) and kept for the row's runs.
		nets := Networks()
		meshes := make([]dkgRowMesh, len(nets))
		var connecting sync.WaitGroup
		for i, n := range nets {
			if benchWillRun(b.Name(), "dkg", "net="+n.Name) {
				connecting.Add(1)
				go func() {
					defer connecting.Done()
					meshes[i].connectMesh(n)
				}()
			}
		}
		connecting.Wait()
		for i, n := range nets {
			b.Run("dkg/net="+n.Name, func(b *testing.B) { dkgNet(b, n, &meshes[i]) })
			meshes[i].close()
		}
	})
}

// signGroup is the fixture of a run of sign rows: its nonce store and
// network.
type signGroup struct {
	store string
	net   Network
}

// signGroups lists the sign rows' fixtures in the order of the rows.
func signGroups() []signGroup {
	var out []signGroup
	for _, store := range []string{"mem", "dir"} {
		for _, n := range Networks() {
			if store == "dir" && n.Name != "same-zone" && n.Name != "transatlantic" {
				continue // the file's cost is the same on every network
			}
			out = append(out, signGroup{store, n})
		}
	}
	return out
}

// config returns the Config of g's fixture, which keeps its nonces in a
// directory below dir if g.store is "dir".
func (g signGroup) config(dir string) Config {
	cfg := Config{Net: g.net, PoolSize: poolSize()}
	if g.store == "dir" {
		cfg.NonceDir = filepath.Join(dir, g.net.Name)
	}
	return cfg
}

// pendingFixture is a Fixture starting in the background.
type pendingFixture struct {
	done chan struct{}
	f    *Fixture
	err  error
}

// startFixture starts a Fixture of cfg in the background, once it has a
// place in slots.
func startFixture(cfg Config, slots chan struct{}) *pendingFixture {
	p := &pendingFixture{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		slots <- struct{}{}
		defer func() { <-slots }()
		p.f, p.err = Start(context.Background(), cfg)
	}()
	return p
}

// wait waits for p to start and returns its Fixture; a nil p has none.
func (p *pendingFixture) wait() (*Fixture, error) {
	if p == nil {
		return nil, nil
	}
	<-p.done
	return p.f, p.err
}

// benchWillRun reports whether -test.bench selects a sub-benchmark named
// elems below the benchmark named parent, as package testing matches the
// pattern, one element per level. It errs on the side of true: a pattern
// it does not take apart (alternations, groups, classes) selects
// everything, which costs a fixture started in vain at worst.
func benchWillRun(parent string, elems ...string) bool {
	f := flag.Lookup("test.bench")
	if f == nil {
		return true
	}
	pat := f.Value.String()
	if pat == "" {
		return false
	}
	if strings.ContainsAny(pat, "|([\\") {
		return true
	}
	name := append(strings.Split(parent, "/"), elems...)
	for i, e := range strings.Split(pat, "/") {
		if i >= len(name) {
			break
		}
		re, err := regexp.Compile(e)
		if err != nil {
			return true
		}
		if !re.MatchString(name[i]) {
			return false
		}
	}
	return true
}
