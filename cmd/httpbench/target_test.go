package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// rounds makes one wrkResult per rate, all with the same p99.
func rounds(p99 time.Duration, rates ...float64) []wrkResult {
	var rs []wrkResult
	for _, r := range rates {
		rs = append(rs, wrkResult{RequestsPerSec: r, P99: p99, Requests: int64(r * 10)})
	}
	return rs
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		desc      string
		base      []wrkResult
		got       []wrkResult
		wantRatio float64
		wantPass  bool
		wantNote  string
	}{
		{"at the bar", rounds(ms, 100, 90, 110), rounds(2*ms, 50, 40, 60), 0.5, true, ""},
		{"under the bar", rounds(ms, 100, 100, 100), rounds(2*ms, 49, 49, 49), 0.49, false, "ratio under 0.50x"},
		{"medians, not means", rounds(ms, 100, 100, 1000), rounds(2*ms, 60, 5, 60), 0.6, true, ""},
		{"p99 at the bar fails", rounds(ms, 100), rounds(10*ms, 90), 0.9, false, "p99 not under 10 ms"},
		{"errors fail", rounds(ms, 100), []wrkResult{{RequestsPerSec: 90, P99: ms, Non2xx: 3, SocketErrors: 1}}, 0.9, false, "3 non-2xx, 1 socket errors"},
		{"baseline errors fail", []wrkResult{{RequestsPerSec: 100, P99: ms, SocketErrors: 2}}, rounds(ms, 90), 0.9, false, "baseline had errors"},
		{"no baseline rate", rounds(ms, 0), rounds(ms, 90), 0, false, "ratio under 0.50x"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			base := &target{name: "bare", results: tc.base}
			tg := &target{name: "verify", baseline: base, minRatio: 0.5, maxP99: 10 * ms, results: tc.got}
			s := summarize(tg)
			if diff := s.ratio - tc.wantRatio; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("ratio = %v, want %v", s.ratio, tc.wantRatio)
			}
			if s.pass != tc.wantPass || !strings.Contains(s.note, tc.wantNote) {
				t.Errorf("pass, note = %v, %q; want %v, containing %q", s.pass, s.note, tc.wantPass, tc.wantNote)
			}
		})
	}
}

func TestSummarizeBaseline(t *testing.T) {
	s := summarize(&target{name: "static-nginx", results: rounds(3*time.Millisecond, 40000, 42000, 41000)})
	if !s.pass || s.rps != 41000 || s.p99 != 3*time.Millisecond || s.ratio != 0 {
		t.Errorf("got %+v", s)
	}
	s = summarize(&target{name: "static-nginx", results: []wrkResult{{RequestsPerSec: 1, Non2xx: 1}}})
	if s.pass {
		t.Errorf("a baseline with non-2xx responses passed: %+v", s)
	}
}

func TestNewTargets(t *testing.T) {
	ts := newTargets(servers{proofsite: server{"http://127.0.0.1:1", 11}, bare: server{"http://127.0.0.1:2", 12}, nginx: server{"http://127.0.0.1:3", 13},
		chat: server{"http://127.0.0.1:4", 14}})
	want := map[string]struct {
		url, baseline string
		pgid          int
		ratio         float64
		p99           time.Duration
	}{
		"bare":             {"http://127.0.0.1:2/json", "", 12, 0, 0},
		"verify":           {"http://127.0.0.1:1/api/ledger/verify", "bare", 11, 0.5, 10 * time.Millisecond},
		"status":           {"http://127.0.0.1:1/api/chain/status", "bare", 11, 0.5, 10 * time.Millisecond},
		"chat":             {"http://127.0.0.1:4/api/chat", "bare", 14, 0.5, 0},
		"evaluate":         {"http://127.0.0.1:1/api/v1/evaluate", "", 11, 0, 10 * time.Millisecond},
		"mcp-list":         {"http://127.0.0.1:1/mcp", "bare", 11, 0.3, 0},
		"mcp-verdict":      {"http://127.0.0.1:1/mcp", "bare", 11, 0.3, 0},
		"static-proofsite": {"http://127.0.0.1:1/bench/page-10k.html", "static-nginx", 11, 0.8, 0},
		"static-nginx":     {"http://127.0.0.1:3/bench/page-10k.html", "", 13, 0, 0},
		"tile-proofsite":   {"http://127.0.0.1:1/ledger/tile/0/000.p/224", "tile-nginx", 11, 0.8, 0},
		"tile-nginx":       {"http://127.0.0.1:3/ledger/tile/0/000.p/224", "", 13, 0, 0},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d targets, want %d", len(ts), len(want))
	}
	for _, tg := range ts {
		w, ok := want[tg.name]
		if !ok {
			t.Errorf("unexpected target %q", tg.name)
			continue
		}
		base := ""
		if tg.baseline != nil {
			base = tg.baseline.name
		}
		if tg.url != w.url || base != w.baseline || tg.pgid != w.pgid || tg.minRatio != w.ratio || tg.maxP99 != w.p99 {
			t.Errorf("%s: url %s, baseline %q, pgid %d, ratio %v, p99 %v; want %+v", tg.name, tg.url, base, tg.pgid, tg.minRatio, tg.maxP99, w)
		}
	}
}

// TestChatScript checks the wrk script of the chat target against its
// request.
func TestChatScript(t *testing.T) {
	r := chatRequest()
	got := r.luaScript()
	for _, want := range []string{"wrk.method = \"POST\"\n", "wrk.body = [[" + r.bodies[0] + "]]\n", `wrk.headers["Content-Type"] = "application/json"`} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	if len(r.bodies) != 1 || strings.Contains(got, "function request") || strings.Contains(r.bodies[0], "]]") || !json.Valid([]byte(r.bodies[0])) {
		t.Errorf("bodies %q, script:\n%s", r.bodies, got)
	}
}

// TestMCPScript checks the wrk script of an MCP target against the request
// it stands for.
func TestMCPScript(t *testing.T) {
	r := mcpRequest("tools/call", "ledger_verdict")
	got := r.luaScript()
	for _, want := range []string{"wrk.method = \"POST\"\n", "wrk.body = [[" + r.bodies[0] + "]]\n", `wrk.headers["Mcp-Name"] = "ledger_verdict"`,
		`wrk.headers["MCP-Protocol-Version"] = "2026-07-28"`, `wrk.headers["Mcp-Method"] = "tools/call"`, `wrk.headers["Content-Type"] = "application/json"`} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(r.bodies[0], "]]") || !strings.Contains(r.bodies[0], `"name":"ledger_verdict"`) {
		t.Errorf("body %s", r.bodies[0])
	}
}

func TestLuaLong(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:      `[[{"a":1}]]`,
		`x]]y`:         `[=[x]]y]=]`,
		`x]]y]=]z`:     `[==[x]]y]=]z]==]`,
		`["a",["b"]]`:  `[=[["a",["b"]]]=]`,
		"line\nbreak]": "[=[line\nbreak]]=]",
	} {
		if got := luaLong(in); got != want {
			t.Errorf("luaLong(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSelectTargets: --only keeps the named targets and their baselines,
// in table order, and refuses a name that is no target's.
func TestSelectTargets(t *testing.T) {
	for _, tc := range []struct {
		only []string
		want string // target names, space-separated; "" all of them
		err  string
	}{
		{only: nil, want: ""},
		{only: []string{"evaluate"}, want: "evaluate"},
		{only: []string{"verify"}, want: "bare verify"},
		{only: []string{"tile-proofsite", "chat"}, want: "bare chat tile-proofsite tile-nginx"},
		{only: []string{"bare"}, want: "bare"},
		{only: []string{"evaluate", "nope"}, err: `--only: no target "nope" (targets: bare, verify,`},
	} {
		all := newTargets(servers{})
		got, err := selectTargets(all, tc.only)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q...", tc.only, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.only, err)
			continue
		}
		var names []string
		for _, x := range got {
			names = append(names, x.name)
		}
		if tc.want == "" && len(got) != len(all) || tc.want != "" && strings.Join(names, " ") != tc.want {
			t.Errorf("%v: targets %v, want %q", tc.only, names, tc.want)
		}
	}
	if _, err := parseConfig([]string{"--only", "evaluat"}, &strings.Builder{}); err == nil {
		t.Error("parseConfig accepted --only evaluat")
	}
}
