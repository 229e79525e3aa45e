package live

import (
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/valyala/fasthttp"
)

// BenchmarkRoutes is the server's own cost of the routes make bench-http
// loads, without sockets: the listener's handler on a reused request
// context.
// cpu-ns/op is the process's CPU time per request (GC included), which a
// busy machine inflates far less than ns/op.
func BenchmarkRoutes(b *testing.B) {
	l := testChain(b)
	srv := newTestServer(b, Options{Chain: l, TilesDir: l.Chain.TilesDir()})
	srv.app.Handler()             // builds the routing tree
	h := srv.app.Server().Handler // what the listener runs: front, then fiber
	for _, r := range []struct{ name, path string }{
		{"verify", "/api/ledger/verify"}, {"status", "/api/chain/status"}, {"static", "/big.txt"},
		{"tile", "/ledger/tile/0/000.p/224"},
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

// BenchmarkChat is the server's own cost of POST /api/chat with a provider
// that answers at once (the chat target of make bench-http): pipeline,
// strict JSON, validation, the node call, the receipt and the encoding.
func BenchmarkChat(b *testing.B) {
	srv, _ := newAIServer(b, aiSetup{providers: map[string]ai.Provider{"S2_CASE": &aitest.Counting{Text: "Recompute every hash yourself."}},
		limits: map[string]Limit{"/api/chat": {Max: 1 << 30, Window: time.Second}}})
	srv.app.Handler()
	h := srv.app.Server().Handler
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/api/chat")
	req.Header.SetHost("proof.test")
	req.Header.SetContentType("application/json")
	req.SetBody([]byte(`{"message":"How does anyone verify the ledger without trusting this server?","node":"S2_CASE"}`))
	serveInMemory(b, h, &req)
}

// serveInMemory has h answer req over and over, in memory, and reports
// the process's CPU time per answer; any answer but 200 fails b.
func serveInMemory(b *testing.B, h fasthttp.RequestHandler, req *fasthttp.Request) {
	var ctx fasthttp.RequestCtx
	ctx.Init2(benchConn{}, nil, false) // huma sets a read deadline on the connection
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		req.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		h(&ctx)
		if ctx.Response.StatusCode() != fasthttp.StatusOK {
			b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// benchConn is the connection of an in-memory request: an address and
// deadlines that nothing waits for.
type benchConn struct{ net.Conn }

func (benchConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000} }
func (benchConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }
func (benchConn) SetReadDeadline(time.Time) error  { return nil }
func (benchConn) SetWriteDeadline(time.Time) error { return nil }

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvaluateHandler is the server's own cost of POST
// /api/v1/evaluate on a 2 KB text, in memory (no connection, no client):
// pipeline, strict JSON, the evaluation and its record, the encoding; by
// the fast path (evalfast.go), and by huma's operation (the fast path
// off). The route under load at 64 connections is bench-http's
// (cmd/httpbench, wrk in a process of its own).
func BenchmarkEvaluateHandler(b *testing.B) {
	evaluation, _ := testEvaluation(b)
	srv := newTestServer(b, Options{Chain: testChain(b), Eval: evaluation,
		Limits: map[string]Limit{"/api/v1/evaluate": {Max: 1 << 30, Window: time.Second}}})
	srv.app.Handler()
	h := srv.app.Server().Handler
	prose := "The quarterly review covers the migration of the billing service to the new cluster; latency dropped by a third. "
	body, _ := json.Marshal(map[string]string{"text": strings.Repeat(prose, 2048/len(prose)+1)[:2048]})
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/api/v1/evaluate")
	req.Header.SetHost("proof.test")
	req.Header.SetContentType("application/json")
	req.SetBody(body)
	for _, path := range []string{"fast", "huma"} {
		b.Run(path, func(b *testing.B) {
			for _, f := range srv.evalFasts {
				f.off = path == "huma"
			}
			serveInMemory(b, h, &req)
		})
	}
}
