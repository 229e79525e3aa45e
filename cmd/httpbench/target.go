package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/cmd/internal/benchstat"
	"github.com/proofsite/proofsite/live/mcp"
)

// target is one URL under load and the bar it must clear.
type target struct {
	name     string        // short label: progress lines, log files
	label    string        // what the table calls it
	server   string        // what answers it
	short    string        // what the table calls it as a baseline
	url      string        // full URL on loopback
	pgid     int           // process group of the server that answers
	static   bool          // serves the static page: its body is checked
	post     *postRequest  // sent instead of a GET; nil for a GET
	script   string        // wrk's Lua script that sends post, once written
	baseline *target       // what it is compared with; nil for a baseline
	minRatio float64       // of the baseline's median requests/s
	maxP99   time.Duration // bar for the median p99; 0 for none
	results  []wrkResult   // one per round
}

// server is one running server: its base URL and its process group.
type server struct {
	url  string
	pgid int
}

// servers are the four servers of one run.
type servers struct{ proofsite, bare, nginx, chat server }

// newTargets returns the targets in table order: each baseline comes just
// before or after what is compared with it.
func newTargets(s servers) []*target {
	bare := &target{name: "bare", label: "bare fiber JSON `" + barePath + "`", server: "fiber, no middleware", short: "bare fiber", url: s.bare.url + barePath, pgid: s.bare.pgid}
	tileNginx := &target{name: "tile-nginx", label: "hash tile `" + tilePath + "` (7 KB)", server: "nginx", short: "nginx", url: s.nginx.url + tilePath, pgid: s.nginx.pgid}
	nginx := &target{name: "static-nginx", label: "10 KB static page", server: "nginx", short: "nginx", url: s.nginx.url + pagePath, pgid: s.nginx.pgid, static: true}
	return []*target{
		bare,
		{name: "verify", label: "`/api/ledger/verify`", server: "proofsite", url: s.proofsite.url + "/api/ledger/verify", pgid: s.proofsite.pgid,
			baseline: bare, minRatio: 0.5, maxP99: 10 * time.Millisecond},
		{name: "status", label: "`/api/chain/status`", server: "proofsite", url: s.proofsite.url + "/api/chain/status", pgid: s.proofsite.pgid,
			baseline: bare, minRatio: 0.5, maxP99: 10 * time.Millisecond},
		{name: "chat", label: "`POST /api/chat`, zero-latency provider", server: "proofsite live edge", url: s.chat.url + "/api/chat", pgid: s.chat.pgid,
			post: chatRequest(), baseline: bare, minRatio: 0.5},
		{name: "evaluate", label: "`POST " + evaluatePath + "`, 2 KB benign texts", server: "proofsite", url: s.proofsite.url + evaluatePath, pgid: s.proofsite.pgid,
			post: evaluateRequest(), maxP99: 10 * time.Millisecond},
		{name: "mcp-list", label: "MCP `tools/list`", server: "proofsite", url: s.proofsite.url + mcp.Endpoint, pgid: s.proofsite.pgid,
			post: mcpRequest("tools/list", ""), baseline: bare, minRatio: 0.3},
		{name: "mcp-verdict", label: "MCP `tools/call` ledger_verdict", server: "proofsite", url: s.proofsite.url + mcp.Endpoint, pgid: s.proofsite.pgid,
			post: mcpRequest("tools/call", "ledger_verdict"), baseline: bare, minRatio: 0.3},
		{name: "static-proofsite", label: "10 KB static page", server: "proofsite", url: s.proofsite.url + pagePath, pgid: s.proofsite.pgid, static: true,
			baseline: nginx, minRatio: 0.8},
		nginx,
		{name: "tile-proofsite", label: "hash tile `" + tilePath + "` (7 KB)", server: "proofsite", url: s.proofsite.url + tilePath, pgid: s.proofsite.pgid,
			baseline: tileNginx, minRatio: 0.8},
		tileNginx,
	}
}

// selectTargets keeps the targets named in only (all of them when only
// is empty) and the baselines they are compared with, in table order. A
// name that is no target's is an error.
func selectTargets(all []*target, only []string) ([]*target, error) {
	if len(only) == 0 {
		return all, nil
	}
	keep := map[*target]bool{}
	for _, name := range only {
		i := slices.IndexFunc(all, func(t *target) bool { return t.name == name })
		if i < 0 {
			names := make([]string, len(all))
			for j, t := range all {
				names[j] = t.name
			}
			return nil, fmt.Errorf("--only: no target %q (targets: %s)", name, strings.Join(names, ", "))
		}
		keep[all[i]] = true
		if b := all[i].baseline; b != nil {
			keep[b] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(all), func(t *target) bool { return !keep[t] }), nil
}

// tilePath is a hash tile of the ledger's tiled log (C2SP tlog-tiles) of the
// bundled history's 224 rows: serve reads it from the chain's tile folder,
// nginx the copy the build hard-linked into the site.
const tilePath = "/ledger/tile/0/000.p/224"

// postRequest is a POST a target sends: its headers, in order, and its
// bodies, sent in turn (most targets have one).
type postRequest struct {
	headers [][2]string
	bodies  []string
}

// mcpRequest is a 2026-07-28 MCP request as a conforming client sends it:
// a tools/call when tool is set.
func mcpRequest(method, tool string) *postRequest {
	params := ""
	h := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"},
		{mcp.HeaderProtocolVersion, mcp.ProtocolVersion}, {mcp.HeaderMethod, method}}
	if tool != "" {
		params = `"name":"` + tool + `","arguments":{},`
		h = append(h, [2]string{mcp.HeaderName, tool})
	}
	return &postRequest{headers: h, bodies: []string{`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion + `",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"httpbench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`}}
}

// luaScript is the wrk script that sends r on every request. With more
// than one body, each wrk thread formats every request once (init) and
// sends them in turn (request). A body goes in a Lua long string, which
// needs no escaping (luaLong).
func (r *postRequest) luaScript() string {
	var b strings.Builder
	b.WriteString("wrk.method = \"POST\"\nwrk.body = " + luaLong(r.bodies[0]) + "\n")
	for _, h := range r.headers {
		fmt.Fprintf(&b, "wrk.headers[%q] = %q\n", h[0], h[1])
	}
	if len(r.bodies) == 1 {
		return b.String()
	}
	b.WriteString("local bodies = {\n")
	for _, body := range r.bodies {
		b.WriteString("  " + luaLong(body) + ",\n")
	}
	b.WriteString(`}
local requests, n = {}, 0
function init(args)
  for i, body in ipairs(bodies) do
    requests[i] = wrk.format(nil, nil, nil, body)
  end
end
function request()
  n = n % #requests + 1
  return requests[n]
end
`)
	return b.String()
}

// luaLong quotes s as a Lua long string of the lowest level whose closing
// bracket neither occurs in s nor begins at its last byte: [[s]], else
// [=[s]=], and so on. Lua drops a newline right after the opening bracket:
// s must not begin with one (no body does: they are JSON objects).
func luaLong(s string) string {
	eq := ""
	for strings.Contains(s+"]", "]"+eq+"]") {
		eq += "="
	}
	return "[" + eq + "[" + s + "]" + eq + "]"
}

// summary is a target's line of the table.
type summary struct {
	t     *target
	rps   float64       // median requests/s across rounds
	p99   time.Duration // median p99 across rounds
	cpu   time.Duration // median server CPU time per request across rounds
	ratio float64       // rps over the baseline's; 0 for a baseline
	pass  bool
	note  string // why it failed, or "" when it passed
}

// summarize reduces a target's rounds to medians and judges it. A target
// fails when it or its baseline had a non-2xx response or a socket error,
// when its ratio is under minRatio, or when its p99 is at or over maxP99.
func summarize(t *target) summary {
	s := summary{t: t, rps: medianRate(t.results), p99: medianP99(t.results), cpu: medianServerCPU(t.results), pass: true}
	var fails []string
	if n, sock := errorCounts(t.results); n+sock > 0 {
		fails = append(fails, fmt.Sprintf("%d non-2xx, %d socket errors", n, sock))
	}
	if b := t.baseline; b != nil {
		if n, sock := errorCounts(b.results); n+sock > 0 {
			fails = append(fails, "baseline had errors")
		}
		if base := medianRate(b.results); base > 0 {
			s.ratio = s.rps / base
		}
		if s.ratio < t.minRatio {
			fails = append(fails, fmt.Sprintf("ratio under %.2fx", t.minRatio))
		}
	}
	if t.maxP99 > 0 && s.p99 >= t.maxP99 {
		fails = append(fails, "p99 not under "+fmtBar(t.maxP99))
	}
	if len(fails) > 0 {
		s.pass, s.note = false, strings.Join(fails, "; ")
	}
	return s
}

func medianRate(rs []wrkResult) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = r.RequestsPerSec
	}
	return benchstat.Median(xs)
}

func medianP99(rs []wrkResult) time.Duration {
	xs := make([]time.Duration, len(rs))
	for i, r := range rs {
		xs[i] = r.P99
	}
	return benchstat.Median(xs)
}

// medianServerCPU is the median across rounds of the server's CPU time
// per request; rounds without requests are left out.
func medianServerCPU(rs []wrkResult) time.Duration {
	var xs []time.Duration
	for _, r := range rs {
		if r.Requests > 0 {
			xs = append(xs, r.ServerCPU/time.Duration(r.Requests))
		}
	}
	return benchstat.Median(xs)
}

func errorCounts(rs []wrkResult) (non2xx, socket int64) {
	for _, r := range rs {
		non2xx += r.Non2xx
		socket += r.SocketErrors
	}
	return non2xx, socket
}
