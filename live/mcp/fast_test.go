package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkCalls counts the requests srv's SDK handles.
func sdkCalls(srv *Server) *atomic.Int64 {
	var n atomic.Int64
	srv.sdk.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			n.Add(1)
			return next(ctx, method, req)
		}
	})
	return &n
}

// serveSDKOnly is serve with the SDK answering every request: the
// reference.
func serveSDKOnly(t *testing.T, src Source) string {
	t.Helper()
	srv, err := New(src, Options{BaseURL: testBase, APIURL: "https://api.test.example", Version: "test", SDKOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return mount(t, srv)
}

// TestFastPathIsTheSDK holds the fast path to the SDK: for every document
// tool and a table of requests, the answer is byte for byte the one the
// SDK gives the same request, and the SDK is left out exactly when the
// fast path is meant to answer.
func TestFastPathIsTheSDK(t *testing.T) {
	src := &fixedSource{}
	srv, fast := serve(t, src)
	calls := sdkCalls(srv)
	reference := serveSDKOnly(t, src)
	call := func(tool, params string) string { return rpc("tools/call", `"name":"`+tool+`"`+params) }
	for tool := range srv.docs {
		for _, tc := range []struct {
			desc   string
			header map[string][]string
			body   string
			fast   bool
		}{
			{"no arguments", headers("tools/call", tool), call(tool, ""), true},
			{"empty arguments", headers("tools/call", tool), call(tool, `,"arguments":{}`), true},
			{"empty arguments with space", headers("tools/call", tool), call(tool, `,"arguments":{ }`), true},
			{"a request written with space", headers("tools/call", tool),
				strings.NewReplacer(`":`, `" : `, `,"`, `, "`).Replace(call(tool, `,"arguments":{}`)), true},
			{"an integer id", headers("tools/call", tool), strings.Replace(call(tool, ""), `"r1"`, "7", 1), true},
			{"id -0", headers("tools/call", tool), strings.Replace(call(tool, ""), `"r1"`, "-0", 1), true},
			{"an id with escapes", headers("tools/call", tool), strings.Replace(call(tool, ""), `"r1"`, `"\u0041<&>\u00e9\u2028\"\\"`, 1), true},
			{"Mcp-Name in base64", with(headers("tools/call", tool), HeaderName, "=?base64?"+b64(tool)+"?="), call(tool, ""), true},
			{"an allowed Origin", with(headers("tools/call", tool), "Origin", testBase), call(tool, ""), true},
			{"arguments", headers("tools/call", tool), call(tool, `,"arguments":{"x":1}`), false},
			{"another params member", headers("tools/call", tool), call(tool, `,"requestState":"s"`), false},
			{"another _meta member", headers("tools/call", tool), strings.Replace(call(tool, ""), `"_meta":{`, `"_meta":{"progressToken":"p",`, 1), false},
		} {
			t.Run(tool+"/"+tc.desc, func(t *testing.T) {
				before := calls.Load()
				got := send(t, "POST", fast, "", tc.header, tc.body)
				if answeredFast := calls.Load() == before; answeredFast != tc.fast {
					t.Errorf("answered on the fast path: %v, want %v", answeredFast, tc.fast)
				}
				want := send(t, "POST", reference, "", tc.header, tc.body)
				if got.status != want.status || !bytes.Equal(got.raw, want.raw) {
					t.Errorf("fast path:\n%d %s\nSDK:\n%d %s", got.status, got.raw, want.status, want.raw)
				}
				for _, h := range []string{"Content-Type", "Cache-Control", "Content-Length", "Mcp-Session-Id"} {
					if got.header.Get(h) != want.header.Get(h) {
						t.Errorf("%s %q, the SDK's %q", h, got.header.Get(h), want.header.Get(h))
					}
				}
			})
		}
	}
	// The kept answers to server/discover and tools/list, sent again with
	// each request's id, are the SDK's too.
	for _, method := range keptMethods {
		for i, id := range []string{`"a"`, "2", `"\u0041<&>"`, `"r1"`} {
			body := strings.Replace(rpc(method, ""), `"r1"`, id, 1)
			before := calls.Load()
			got, want := send(t, "POST", fast, "", headers(method, ""), body), send(t, "POST", reference, "", headers(method, ""), body)
			if i > 0 && calls.Load() != before {
				t.Errorf("%s %s: not the kept answer", method, id)
			}
			if got.status != want.status || !bytes.Equal(got.raw, want.raw) {
				t.Errorf("%s %s: kept answer:\n%s\nSDK:\n%s", method, id, got.raw, want.raw)
			}
		}
	}
	if len(srv.docs) != 4 {
		t.Errorf("%d document tools, want ledger_verdict, chain_status, node_roster and endpoint_catalog", len(srv.docs))
	}
}

// changingSource serves a verdict that changes, with a generated_at of
// each request's own.
type changingSource struct {
	fixedSource
	verdict atomic.Pointer[string]
	n       atomic.Int64
}

func (c *changingSource) Verdict(context.Context) (json.RawMessage, error) {
	at := "2026-01-02T03:04:0" + string(rune('0'+c.n.Add(1)%10)) + ".123456789Z"
	return json.RawMessage(`{"verdict":"` + *c.verdict.Load() + `","note":"<&>","generated_at":"` + at + `"}`), nil
}

// TestFastPathFollowsTheDocument: each request gets its own generated_at,
// and a new version of a document a new answer, the SDK's.
func TestFastPathFollowsTheDocument(t *testing.T) {
	src := &changingSource{}
	pass := "PASS"
	src.verdict.Store(&pass)
	_, fast := serve(t, src)
	reference := serveSDKOnly(t, src)
	body := rpc("tools/call", `"name":"ledger_verdict"`)
	for i, v := range []string{"PASS", "PASS", "FAIL", "PASS"} {
		src.verdict.Store(&v)
		got := send(t, "POST", fast, "", headers("tools/call", "ledger_verdict"), body)
		want := send(t, "POST", reference, "", headers("tools/call", "ledger_verdict"), body)
		// Each read has its own time: the two answers differ there alone.
		at := func(r reply) string {
			var res struct {
				StructuredContent struct {
					GeneratedAt string `json:"generated_at"`
				} `json:"structuredContent"`
			}
			json.Unmarshal(r.body.Result, &res)
			return res.StructuredContent.GeneratedAt
		}
		if g, w := at(got), at(want); g == "" || g == w ||
			!bytes.Equal(bytes.ReplaceAll(got.raw, []byte(g), []byte("T")), bytes.ReplaceAll(want.raw, []byte(w), []byte("T"))) {
			t.Errorf("request %d:\n%s\n%s", i, got.raw, want.raw)
		}
		if !strings.Contains(string(got.raw), `"verdict":"`+v+`"`) {
			t.Errorf("request %d: not the verdict %s: %s", i, v, got.raw)
		}
	}
}

func TestCutGeneratedAt(t *testing.T) {
	for _, tc := range []struct {
		doc, version, at string
		ok               bool
	}{
		{`{"a":1,"generated_at":"2026-01-02T03:04:05.5Z"}`, `{"a":1`, "2026-01-02T03:04:05.5Z", true},
		{`{"a":1,"generated_at":"2026-01-02T03:04:05+02:00"}`, `{"a":1`, "2026-01-02T03:04:05+02:00", true},
		{`{"generated_at":"2026-01-02T03:04:05Z","a":1}`, "", "", false},        // not the last member
		{`{"a":{"generated_at":"2026-01-02T03:04:05Z"}}`, "", "", false},        // not a member of the document
		{`{"a":1,"generated_at":"2026\u002d01"}`, "", "", false},                // would need decoding
		{`{"a":1,"generated_at":"<2026>"}`, "", "", false},                      // would be escaped
		{`{"a":1,"generated_at":""}`, "", "", false},                            // nothing to put back
		{`{"a":1,"generated_at":"2026-01-02T03:04:05Z"}` + "\n", "", "", false}, // not the end
		{`{"a":1}`, "", "", false}, // none
		{`{"a":",\"generated_at\":\"x","generated_at":"1"}`, `{"a":",\"generated_at\":\"x"`, "1", true}, // the last one
	} {
		version, at, ok := cutGeneratedAt([]byte(tc.doc))
		if string(version) != tc.version || string(at) != tc.at || ok != tc.ok {
			t.Errorf("%s: %q %q %v", tc.doc, version, at, ok)
		}
	}
}

// TestFastPathLeavesFailuresToTheSDK: a document that fails its schema is
// the SDK's to refuse.
func TestFastPathLeavesFailuresToTheSDK(t *testing.T) {
	srv, err := New(&fixedSource{}, Options{BaseURL: testBase, Schemas: map[string][]byte{
		VerdictRoute: []byte(`{"type":"object","required":["canonical_spine_valid"],"properties":{"canonical_spine_valid":{"type":"string"}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	calls := sdkCalls(srv)
	r := send(t, "POST", mount(t, srv), "", headers("tools/call", "ledger_verdict"), rpc("tools/call", `"name":"ledger_verdict"`))
	if calls.Load() != 1 || r.status != http.StatusOK || r.body.Error == nil || !strings.Contains(r.body.Error.Message, "validating tool output") {
		t.Errorf("%d SDK calls: %d %s", calls.Load(), r.status, r.raw)
	}
}
