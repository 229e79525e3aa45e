package live

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// BenchmarkRoutes is the server's own cost of the routes make bench-http
// loads, without sockets: the listener's handler on a reused request
// context.
// cpu-ns/op is the process's CPU time per request (GC included), which a
// busy machine inflates far less than ns/op.
func BenchmarkRoutes(b *testing.B) {
	srv := newTestServer(b, Options{Chain: testChain(b)})
	srv.app.Handler()             // builds the routing tree
	h := srv.app.Server().Handler // what the listener runs: front, then fiber
	for _, r := range []struct{ name, path string }{
		{"verify", "/api/ledger/verify"}, {"status", "/api/chain/status"}, {"static", "/big.txt"},
	} {
		b.Run(r.name, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(fasthttp.MethodGet)
			ctx.Request.SetRequestURI(r.path)
			ctx.Request.Header.SetHost("proof.test")
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				ctx.Response.Reset()
				h(&ctx)
				if ctx.Response.StatusCode() != fasthttp.StatusOK {
					b.Fatalf("%s: %d %s", r.path, ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvaluateRoute is POST /api/v1/evaluate over loopback HTTP at 64
// connections: 64 clients, each with a connection of its own kept alive,
// send a 2 KB text in turn; it reports the p50 and p99 latency a client
// sees, the requests per second, and the process's CPU time per request
// (server and clients). The clients run in this process, so they take CPU
// from the server: the latency is an upper bound.
func BenchmarkEvaluateRoute(b *testing.B) {
	evaluation, _ := testEvaluation(b)
	limit := Limit{Max: 1 << 30, Window: time.Second}
	srv := newTestServer(b, Options{Chain: testChain(b), Eval: evaluation, Limits: map[string]Limit{"/api/v1/evaluate": limit}})
	url := serveLoopback(b, srv) + "/api/v1/evaluate"
	prose := "The quarterly review covers the migration of the billing service to the new cluster; latency dropped by a third. "
	text := strings.Repeat(prose, 2048/len(prose)+1)[:2048]
	body, _ := json.Marshal(map[string]string{"text": text})
	const conns = 64
	var next atomic.Int64
	lat := make([][]time.Duration, conns)
	b.ResetTimer()
	cpu0 := cpuTime(b)
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}}
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	at := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	b.ReportMetric(float64(at(0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(at(0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "req/s")
}
