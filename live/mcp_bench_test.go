package live

import (
	"slices"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/mcp"
	"github.com/valyala/fasthttp"
)

// BenchmarkMCP is the server's own cost of the MCP surface beside a bare
// fiber JSON handler and the HTTP verdict route, in one run and without
// sockets: each request goes through what the listener runs (front, then
// fiber) on a fresh request.
// It reports requests/s of one core and the p99 of single requests; the
// target is at least 0.3x the bare handler's requests/s. tools-list is a
// kept answer, call-verdict the fast path (live/mcp/fast.go); both pass
// the transport guard and the request pipeline first. make bench-http
// measures the same over loopback with wrk.
func BenchmarkMCP(b *testing.B) {
	srv := newTestServer(b, Options{Chain: testChain(b)})
	srv.app.Handler() // builds the routing tree
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Get("/bare", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok", "canonical_spine_valid": true}) })
	bare.Handler()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, r := range []struct {
		name, method, path, mcpMethod, tool, body string
		app                                       *fiber.App
	}{
		{name: "bare", method: "GET", path: "/bare", app: bare},
		{name: "verify", method: "GET", path: "/api/ledger/verify", app: srv.app},
		{name: "tools-list", method: "POST", path: mcp.Endpoint, mcpMethod: "tools/list", app: srv.app,
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`},
		{name: "call-verdict", method: "POST", path: mcp.Endpoint, mcpMethod: "tools/call", tool: "ledger_verdict", app: srv.app,
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger_verdict","arguments":{},` + meta + `}}`},
	} {
		b.Run(r.name, func(b *testing.B) {
			h := r.app.Server().Handler
			var req fasthttp.Request
			req.Header.SetMethod(r.method)
			req.SetRequestURI(r.path)
			req.Header.SetHost("127.0.0.1")
			if r.body != "" {
				req.Header.SetContentType("application/json")
				req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion)
				req.Header.Set(mcp.HeaderMethod, r.mcpMethod)
				if r.tool != "" {
					req.Header.Set(mcp.HeaderName, r.tool)
				}
				req.SetBodyString(r.body)
			}
			var ctx fasthttp.RequestCtx
			took := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				// The MCP endpoint rewrites the request it hands the SDK:
				// every round starts from the original.
				ctx.Init(&req, nil, nil)
				ctx.Response.Reset()
				t0 := time.Now()
				h(&ctx)
				if len(took) < cap(took) {
					took = append(took, time.Since(t0))
				}
				if ctx.Response.StatusCode() != fasthttp.StatusOK {
					b.Fatalf("%s: %d %s", r.name, ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
