package live

import (
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
