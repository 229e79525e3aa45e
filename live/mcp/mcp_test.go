package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// fixedSource serves small documents in the shape of the live edge's routes
// and counts its reads. It has nothing to write to.
type fixedSource struct {
	reads    atomic.Int64
	failWith error
}

const (
	testVerdict = `{"status":"ok","verdict":"PASS_WITH_DOCUMENTED_STRICT_SEAM","canonical_spine_valid":true,"strict_table_valid":false,` +
		`"strict_table_break_at_block":3,"warning":null,"valid":false,"valid_scope":"strict_table","valid_deprecated":true,"generated_at":"2026-01-02T03:04:05Z"}`
	testStatus = `{"status":"ok","day":12,"blocks":5,"checkpoint":{"origin":"test","size":5},"generated_at":"2026-01-02T03:04:05Z"}`
	testNodes  = `{"federation":[{"id":"s1","designation":"S1_PLEX","name":"Plex","kind":"ai"}],"roster_size":2,"generated_at":"2026-01-02T03:04:05Z"}`
	testDisc   = `{"endpoints":[{"method":"POST","path":"/mcp"}],"features":{"mcp":true},"generated_at":"2026-01-02T03:04:05Z"}`
	testConst  = `{"version":"1.8","published_text_version":"2.0","articles":3,"license":"CC0-1.0","sha256":"abc","artifact":{"articles":[` +
		`{"number":1,"title":"Name and Purpose","text":"Act so that every public claim can be checked.","tags":["foundations"]},` +
		`{"number":2,"title":"Scope","text":"These rules bind the Bridge and every node.","tags":["foundations","scope"]},` +
		`{"number":3,"title":"The Gate","text":"Deny by default; only the Bridge authorizes.","tags":["gate"]}]},"generated_at":"2026-01-02T03:04:05Z"}`
)

// testTable is a strict table of n rows.
func testTable(n int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"index":%d,"hash":"h%d","on_spine":true}`, i, i)
	}
	return `{"ok":true,"canonical_spine_valid":true,"strict_table_valid":false,"strict_table_break_at_block":3,"verdict":"PASS",` +
		`"metadata_only":true,"breaks":[{"at":3}],"documented_seams":[{"block":3}],"off_spine_rows":[2],"row_count":` + fmt.Sprint(n) +
		`,"rows":[` + strings.Join(rows, ",") + `],"generated_at":"2026-01-02T03:04:05Z"}`
}

func (f *fixedSource) read(doc string) (json.RawMessage, error) {
	f.reads.Add(1)
	if f.failWith != nil {
		return nil, f.failWith
	}
	return json.RawMessage(doc), nil
}

func (f *fixedSource) Verdict(context.Context) (json.RawMessage, error) { return f.read(testVerdict) }
func (f *fixedSource) ChainStatus(context.Context) (json.RawMessage, error) {
	return f.read(testStatus)
}
func (f *fixedSource) StrictTable(context.Context) (json.RawMessage, error) {
	return f.read(testTable(120))
}
func (f *fixedSource) Constitution(context.Context) (json.RawMessage, error) {
	return f.read(testConst)
}
func (f *fixedSource) Nodes(context.Context) (json.RawMessage, error)     { return f.read(testNodes) }
func (f *fixedSource) Discovery(context.Context) (json.RawMessage, error) { return f.read(testDisc) }

const testBase = "https://proof.test.example"

// serve mounts the surface on a fiber app on 127.0.0.1 and returns its
// endpoint URL.
func serve(t testing.TB, src Source) (*Server, string) {
	t.Helper()
	srv, err := New(src, Options{BaseURL: testBase, APIURL: "https://api.test.example", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, mount(t, srv)
}

// mount serves srv on a fiber app on 127.0.0.1 and returns its endpoint URL.
func mount(t testing.TB, srv *Server) string {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All(Endpoint, srv.Serve)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	return "http://" + ln.Addr().String() + Endpoint
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// meta is a complete _meta.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"table","version":"1.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

// rpc builds a request body.
func rpc(method, params string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":"r1","method":"` + method + `","params":{` + params + meta + `}}`
}

// headers are the request headers of a method, as a conforming client sends
// them.
func headers(method, name string) map[string][]string {
	h := map[string][]string{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		HeaderProtocolVersion: {ProtocolVersion}, HeaderMethod: {method}}
	if name != "" {
		h[HeaderName] = []string{name}
	}
	return h
}

// reply is an answer of the surface.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
}

func send(t testing.TB, method, url, host string, h map[string][]string, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.raw, _ = io.ReadAll(resp.Body)
	if err := json.Unmarshal(r.raw, &r.body); err != nil {
		t.Fatalf("%d %s: not JSON: %q", r.status, resp.Header.Get("Content-Type"), r.raw)
	}
	return r
}

// with returns h with one header replaced (or removed, without values).
func with(h map[string][]string, name string, values ...string) map[string][]string {
	out := map[string][]string{}
	for k, v := range h {
		if !strings.EqualFold(k, name) {
			out[k] = v
		}
	}
	if len(values) > 0 {
		out[name] = values
	}
	return out
}

// TestTransportRules holds the surface to the transport rules of
// 2026-07-28 over real HTTP: every answer, refusals included, is one
// JSON-RPC object in application/json that no cache keeps.
func TestTransportRules(t *testing.T) {
	_, url := serve(t, &fixedSource{})
	list, call := headers("tools/list", ""), headers("tools/call", "ledger_verdict")
	verdict := rpc("tools/call", `"name":"ledger_verdict"`)
	tests := []struct {
		desc   string
		method string
		host   string
		header map[string][]string
		body   string
		status int
		code   int64 // 0: a result
		data   string
	}{
		{"tools/list", "POST", "", list, rpc("tools/list", ""), 200, 0, ""},
		{"server/discover", "POST", "", headers("server/discover", ""), rpc("server/discover", ""), 200, 0, ""},
		{"tools/call", "POST", "", call, verdict, 200, 0, ""},
		{"integer id", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"r1"`, "7", 1), 200, 0, ""},
		{"Mcp-Name in base64", "POST", "", with(call, HeaderName, "=?base64?bGVkZ2VyX3ZlcmRpY3Q=?="), verdict, 200, 0, ""},
		{"session and resumption headers are ignored", "POST", "", with(with(list, "Mcp-Session-Id", "abc"), "Last-Event-ID", "x_1"), rpc("tools/list", ""), 200, 0, ""},
		{"no Accept allows JSON", "POST", "", with(list, "Accept"), rpc("tools/list", ""), 200, 0, ""},
		{"Accept */*", "POST", "", with(list, "Accept", "*/*"), rpc("tools/list", ""), 200, 0, ""},

		{"GET", "GET", "", list, "", 405, CodeInvalidRequest, ""},
		{"DELETE", "DELETE", "", list, "", 405, CodeInvalidRequest, ""},
		{"no MCP-Protocol-Version", "POST", "", with(list, HeaderProtocolVersion), rpc("tools/list", ""), 400, CodeHeaderMismatch, `{"supported":["2026-07-28"]}`},
		{"an older version", "POST", "", with(list, HeaderProtocolVersion, "2025-06-18"), strings.ReplaceAll(rpc("tools/list", ""), "2026-07-28", "2025-06-18"), 400, CodeUnsupportedProtocolVer, `{"supported":["2026-07-28"],"requested":"2025-06-18"}`},
		{"an unknown version", "POST", "", with(list, HeaderProtocolVersion, "2099-01-01"), rpc("tools/list", ""), 400, CodeUnsupportedProtocolVer, `{"supported":["2026-07-28"],"requested":"2099-01-01"}`},
		{"two version headers", "POST", "", with(list, HeaderProtocolVersion, "2026-07-28", "2026-07-28"), rpc("tools/list", ""), 400, CodeHeaderMismatch, ""},
		{"header and _meta disagree", "POST", "", list, strings.Replace(rpc("tools/list", ""), `protocolVersion":"2026-07-28`, `protocolVersion":"2025-11-25`, 1), 400, CodeHeaderMismatch, ""},
		{"_meta without a version", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"io.modelcontextprotocol/protocolVersion":"2026-07-28",`, "", 1), 400, CodeInvalidParams, ""},
		{"no _meta", "POST", "", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 400, CodeInvalidParams, ""},
		{"no params", "POST", "", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400, CodeInvalidParams, ""},
		{"params not an object", "POST", "", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`, 400, CodeInvalidParams, ""},
		{"no client info", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"io.modelcontextprotocol/clientInfo":{"name":"table","version":"1.0"},`, "", 1), 400, CodeInvalidParams, ""},
		{"client info without a version", "POST", "", list, strings.Replace(rpc("tools/list", ""), `,"version":"1.0"`, "", 1), 400, CodeInvalidParams, ""},
		{"no capabilities", "POST", "", list, strings.Replace(rpc("tools/list", ""), `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1), 400, CodeInvalidParams, ""},
		{"capabilities not an object", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":true`, 1), 400, CodeInvalidParams, ""},
		{"no Mcp-Method", "POST", "", with(list, HeaderMethod), rpc("tools/list", ""), 400, CodeHeaderMismatch, ""},
		{"Mcp-Method disagrees", "POST", "", with(list, HeaderMethod, "tools/call"), rpc("tools/list", ""), 400, CodeHeaderMismatch, ""},
		{"no Mcp-Name", "POST", "", with(call, HeaderName), verdict, 400, CodeHeaderMismatch, ""},
		{"Mcp-Name disagrees", "POST", "", with(call, HeaderName, "chain_status"), verdict, 400, CodeHeaderMismatch, ""},
		{"unknown method", "POST", "", headers("resources/list", ""), rpc("resources/list", ""), 404, CodeMethodNotFound, ""},
		{"initialize", "POST", "", headers("initialize", ""), rpc("initialize", `"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"a","version":"1"}`), 404, CodeMethodNotFound, ""},
		{"ping", "POST", "", headers("ping", ""), rpc("ping", ""), 404, CodeMethodNotFound, ""},
		{"legacy initialize without headers", "POST", "", with(headers("initialize", ""), HeaderProtocolVersion), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`, 400, CodeHeaderMismatch, `{"supported":["2026-07-28"]}`},
		{"arguments null", "POST", "", headers("tools/call", "strict_table_rows"), rpc("tools/call", `"name":"strict_table_rows","arguments":null`), 400, CodeInvalidParams, ""},
		{"unknown tool", "POST", "", headers("tools/call", "write_chain"), rpc("tools/call", `"name":"write_chain"`), 400, CodeInvalidParams, ""},
		{"batch", "POST", "", list, "[" + rpc("tools/list", "") + "]", 400, CodeInvalidRequest, ""},
		{"notification", "POST", "", list, `{"jsonrpc":"2.0","method":"tools/list","params":{` + meta + `}}`, 400, CodeInvalidRequest, ""},
		{"null id", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"r1"`, "null", 1), 400, CodeInvalidRequest, ""},
		{"fractional id", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"r1"`, "1.5", 1), 400, CodeInvalidRequest, ""},
		{"jsonrpc 1.0", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"2.0"`, `"1.0"`, 1), 400, CodeInvalidRequest, ""},
		{"a response", "POST", "", list, `{"jsonrpc":"2.0","id":1,"result":{}}`, 400, CodeInvalidRequest, ""},
		{"method differing in case only", "POST", "", list, strings.Replace(rpc("tools/list", ""), `"method"`, `"Method"`, 1), 400, CodeInvalidRequest, ""},
		{"not JSON", "POST", "", list, "tools/list please", 400, CodeParseError, ""},
		{"empty body", "POST", "", list, "", 400, CodeParseError, ""},
		{"foreign Origin", "POST", "", with(list, "Origin", "https://evil.example"), rpc("tools/list", ""), 403, CodeInvalidRequest, ""},
		{"null Origin", "POST", "", with(list, "Origin", "null"), rpc("tools/list", ""), 403, CodeInvalidRequest, ""},
		{"two Origins", "POST", "", with(list, "Origin", testBase, "https://evil.example"), rpc("tools/list", ""), 403, CodeInvalidRequest, ""},
		{"the site's Origin", "POST", "", with(list, "Origin", testBase), rpc("tools/list", ""), 200, 0, ""},
		{"the API's Origin", "POST", "", with(list, "Origin", "https://API.test.example"), rpc("tools/list", ""), 200, 0, ""},
		{"a loopback Origin", "POST", "", with(list, "Origin", "http://localhost:5173"), rpc("tools/list", ""), 200, 0, ""},
		{"a rebinding Host", "POST", "attacker.example", list, rpc("tools/list", ""), 403, CodeInvalidRequest, ""},
		{"the site's Host", "POST", "proof.test.example", list, rpc("tools/list", ""), 200, 0, ""},
		{"a loopback Host", "POST", "localhost:8080", list, rpc("tools/list", ""), 200, 0, ""},
		{"Content-Type text/plain", "POST", "", with(list, "Content-Type", "text/plain"), rpc("tools/list", ""), 415, CodeInvalidRequest, ""},
		{"no Content-Type", "POST", "", with(list, "Content-Type"), rpc("tools/list", ""), 415, CodeInvalidRequest, ""},
		{"Accept text/event-stream only", "POST", "", with(list, "Accept", "text/event-stream"), rpc("tools/list", ""), 406, CodeInvalidRequest, ""},
		{"Accept refusing JSON", "POST", "", with(list, "Accept", "application/json;q=0, text/event-stream"), rpc("tools/list", ""), 406, CodeInvalidRequest, ""},
		{"body over the limit", "POST", "", list, rpc("tools/list", `"pad":"`+strings.Repeat("x", DefaultMaxBodyBytes)+`"`), 413, CodeInvalidRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			r := send(t, tc.method, url, tc.host, tc.header, tc.body)
			if r.status != tc.status {
				t.Errorf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := r.header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			if r.header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a session id: %q", r.header.Get("Mcp-Session-Id"))
			}
			if r.body.JSONRPC != "2.0" {
				t.Errorf("jsonrpc %q", r.body.JSONRPC)
			}
			if tc.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q", r.header.Get("Allow"))
			}
			switch {
			case tc.code == 0 && (r.body.Error != nil || len(r.body.Result) == 0):
				t.Errorf("want a result: %s", r.raw)
			case tc.code != 0 && (r.body.Error == nil || r.body.Error.Code != tc.code || r.body.Error.Message == ""):
				t.Errorf("want error %d: %s", tc.code, r.raw)
			case tc.data != "" && string(r.body.Error.Data) != tc.data:
				t.Errorf("error data %s, want %s", r.body.Error.Data, tc.data)
			}
		})
	}
}

// TestErrorsEchoTheID checks that a refusal after the id was read answers
// to that id.
func TestErrorsEchoTheID(t *testing.T) {
	_, url := serve(t, &fixedSource{})
	r := send(t, "POST", url, "", with(headers("tools/list", ""), HeaderMethod, "tools/call"), rpc("tools/list", ""))
	if string(r.body.ID) != `"r1"` {
		t.Errorf("id %s: %s", r.body.ID, r.raw)
	}
	r = send(t, "POST", url, "", headers("tools/list", ""), "[]")
	if r.body.ID != nil {
		t.Errorf("id %s before the message was read", r.body.ID)
	}
}

// TestSourceErrorsAreToolErrors checks that a Source that cannot answer
// makes a tool result with isError, not a protocol error.
func TestSourceErrorsAreToolErrors(t *testing.T) {
	_, url := serve(t, &fixedSource{failWith: errors.New("the ledger has not been verified yet")})
	r := send(t, "POST", url, "", headers("tools/call", "ledger_verdict"), rpc("tools/call", `"name":"ledger_verdict"`))
	var res struct {
		IsError bool `json:"isError"`
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(r.body.Result, &res); err != nil || r.status != 200 || !res.IsError || len(res.Content) != 1 ||
		!strings.Contains(res.Content[0].Text, "not been verified") {
		t.Errorf("%d %s", r.status, r.raw)
	}
}

// TestKeptAnswers checks that server/discover and tools/list, answered once
// by the SDK and then from what it said, answer the same to every id, and
// that a request with more than _meta still reaches the SDK.
func TestKeptAnswers(t *testing.T) {
	_, url := serve(t, &fixedSource{})
	for _, method := range keptMethods {
		var first json.RawMessage
		for i, id := range []string{`"a"`, "2", `"c"`} {
			body := strings.Replace(rpc(method, ""), `"r1"`, id, 1)
			r := send(t, "POST", url, "", headers(method, ""), body)
			if r.status != 200 || string(r.body.ID) != id || len(r.body.Result) == 0 {
				t.Fatalf("%s %d: %d %s", method, i, r.status, r.raw)
			}
			if first == nil {
				first = r.body.Result
			} else if string(r.body.Result) != string(first) {
				t.Errorf("%s: answer %d differs:\n%s\n%s", method, i, r.body.Result, first)
			}
		}
	}
	r := send(t, "POST", url, "", headers("tools/list", ""), rpc("tools/list", `"cursor":"not-a-cursor"`))
	if r.status != 400 || r.body.Error == nil || r.body.Error.Code != CodeInvalidParams {
		t.Errorf("a cursor the SDK never issued: %d %s", r.status, r.raw)
	}
}
