package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proofsite/proofsite/live/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/valyala/fasthttp"
)

// mcpServer starts the live edge over a real chain on 127.0.0.1, with the
// project's constitution artifact.
func mcpServer(t *testing.T) (base string, chain Chain) {
	t.Helper()
	c := testChain(t)
	site := testSite()
	artifact, err := os.ReadFile("../content/constitution/runtime-v1.8.json")
	if err != nil {
		t.Fatal(err)
	}
	site.RuntimeArtifact.Raw = artifact
	return serveLoopback(t, newTestServer(t, Options{Chain: c, Site: site})), c
}

// connect is the SDK's own client in its default mode: protocol
// 2026-07-28, server/discover instead of initialize, no session.
func connect(t *testing.T, endpoint string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "proofsite-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// getJSON fetches a live document and drops its generation time.
func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "generated_at")
	return doc
}

// TestMCPWithSDKClient drives the surface with the official Go SDK's client
// over real HTTP, on both endpoints.
func TestMCPWithSDKClient(t *testing.T) {
	base, _ := mcpServer(t)
	for _, endpoint := range []string{mcp.Endpoint, mcp.APIEndpoint} {
		t.Run(endpoint, func(t *testing.T) {
			cs := connect(t, base+endpoint)
			init := cs.InitializeResult()
			if init.ProtocolVersion != mcp.ProtocolVersion || init.Capabilities.Tools == nil || init.ServerInfo == nil || init.ServerInfo.Name != "proofsite" {
				t.Fatalf("discover: %+v", init)
			}
			if cs.ID() != "" {
				t.Errorf("session id %q: the surface has no sessions", cs.ID())
			}
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				a := tool.Annotations
				if a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
					t.Errorf("%s: annotations %+v", tool.Name, a)
				}
				if tool.InputSchema == nil || tool.OutputSchema == nil {
					t.Errorf("%s: input schema %v, output schema %v", tool.Name, tool.InputSchema, tool.OutputSchema)
				}
			}
			want := []string{"chain_status", "constitution_article", "endpoint_catalog", "ledger_verdict", "node_roster", "strict_table_rows"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			// A document tool answers what its route answers.
			for tool, route := range map[string]string{"ledger_verdict": mcp.VerdictRoute, "chain_status": mcp.ChainStatusRoute,
				"node_roster": mcp.NodesRoute, "endpoint_catalog": mcp.DiscoveryRoute} {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", tool, err, res)
				}
				got := structured(t, res)
				delete(got, "generated_at")
				if want := getJSON(t, base+route); !equalJSON(got, want) {
					t.Errorf("%s differs from GET %s:\n got %v\nwant %v", tool, route, got, want)
				}
			}
			// A page of rows is cut from the route's table; an article
			// comes from the route's artifact.
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "strict_table_rows", Arguments: map[string]any{"from": 150, "limit": 10}})
			if err != nil || res.IsError {
				t.Fatalf("strict_table_rows: %v %+v", err, res)
			}
			page, table := structured(t, res), getJSON(t, base+mcp.StrictTableRoute)
			rows := table["rows"].([]any)
			if !equalJSON(map[string]any{"rows": page["rows"]}, map[string]any{"rows": rows[150:160]}) || page["row_count"] != float64(len(rows)) ||
				page["next_from"] != 160.0 || page["canonical_spine_valid"] != table["canonical_spine_valid"] || page["verdict"] != table["verdict"] {
				t.Errorf("page %v", page)
			}
			res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "constitution_article", Arguments: map[string]any{"number": 3}})
			if err != nil || res.IsError {
				t.Fatalf("constitution_article: %v %+v", err, res)
			}
			articles, artifact := structured(t, res), getJSON(t, base+mcp.ConstitutionRoute)
			third := artifact["artifact"].(map[string]any)["articles"].([]any)[2]
			if got := articles["articles"].([]any); len(got) != 1 || !equalJSON(got[0].(map[string]any), third.(map[string]any)) ||
				articles["artifact_sha256"] != artifact["sha256"] {
				t.Errorf("article 3: %v, want %v", articles, third)
			}
		})
	}
}

// TestMCPSpecRequests sends the requests of the specification's own text
// (2026-07-28, Streamable HTTP and server/discover; tool names are ours),
// byte for byte, as an independent client would: the official TypeScript
// SDK does not speak 2026-07-28 yet (1.32.2 stops at 2025-11-25).
func TestMCPSpecRequests(t *testing.T) {
	base, _ := mcpServer(t)
	tests := []struct {
		file   string
		status int
		check  func(t *testing.T, body map[string]any)
	}{
		{"discover.http", 200, func(t *testing.T, b map[string]any) {
			r := b["result"].(map[string]any)
			info := r["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
			if b["id"] != "discover-1" || r["resultType"] != "complete" || fmt.Sprint(r["supportedVersions"]) != "[2026-07-28]" ||
				r["capabilities"].(map[string]any)["tools"] == nil || info["name"] != "proofsite" || !strings.Contains(r["instructions"].(string), "no authority") {
				t.Errorf("%v", b)
			}
		}},
		{"tools-list.http", 200, func(t *testing.T, b map[string]any) {
			if tools := b["result"].(map[string]any)["tools"].([]any); b["id"] != 2.0 || len(tools) != 6 {
				t.Errorf("%v", b)
			}
		}},
		{"tools-call.http", 200, func(t *testing.T, b map[string]any) {
			r := b["result"].(map[string]any)
			a := r["structuredContent"].(map[string]any)["articles"].([]any)
			if r["isError"] == true || len(a) != 1 || a[0].(map[string]any)["number"] != 3.0 || r["resultType"] != "complete" {
				t.Errorf("%v", b)
			}
		}},
		{"unsupported-version.http", 400, func(t *testing.T, b map[string]any) {
			e := b["error"].(map[string]any)
			if e["code"] != -32022.0 || !equalJSON(e["data"].(map[string]any), map[string]any{"supported": []any{"2026-07-28"}, "requested": "1900-01-01"}) {
				t.Errorf("%v", b)
			}
		}},
		{"header-mismatch.http", 400, func(t *testing.T, b map[string]any) {
			if e := b["error"].(map[string]any); e["code"] != -32020.0 || b["id"] != 1.0 {
				t.Errorf("%v", b)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "mcp", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			head, body, _ := strings.Cut(string(raw), "\n\n")
			lines := strings.Split(head, "\n")
			method, target, _ := strings.Cut(lines[0], " ")
			target, _, _ = strings.Cut(target, " ")
			req, err := http.NewRequest(method, base+target, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines[1:] {
				k, v, _ := strings.Cut(l, ": ")
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Add(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			var b map[string]any
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(got, &b) != nil || b["jsonrpc"] != "2.0" {
				t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
			}
			tc.check(t, b)
		})
	}
}

// TestMCPDescribed checks the manifest, the narrow tool list and discovery
// against the surface itself.
func TestMCPDescribed(t *testing.T) {
	base, _ := mcpServer(t)
	list, err := connect(t, base+mcp.Endpoint).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := getJSON(t, base+mcp.ToolsPath)
	want, _ := json.Marshal(list.Tools)
	if got, _ := json.Marshal(tools["tools"]); string(got) != string(want) || tools["callable"] != true || tools["protocol_version"] != mcp.ProtocolVersion {
		t.Errorf("GET %s differs from tools/list:\n got %s\nwant %s", mcp.ToolsPath, got, want)
	}
	m := getJSON(t, base+mcp.ManifestPath)
	tr := m["transport"].(map[string]any)
	auth := m["authority"].(map[string]any)
	if m["protocol_version"] != "2026-07-28" || tr["stateless"] != true || tr["sessions"] != false || tr["initialize"] != false ||
		fmt.Sprint(tr["endpoints"]) != "[https://proof.test.example/mcp https://proof.test.example/api/mcp]" ||
		fmt.Sprint(m["methods"]) != "[server/discover tools/list tools/call]" || len(m["tools"].([]any)) != 6 ||
		auth["read_only"] != true || auth["statement"] != mcp.Authority || len(auth["no_authority_over"].([]any)) != 8 {
		t.Errorf("manifest %v", m)
	}
	for _, tool := range m["tools"].([]any) {
		if tool := tool.(map[string]any); tool["read_only"] != true || tool["destructive"] != false || tool["open_world"] != false {
			t.Errorf("manifest tool %v", tool)
		}
	}
	disc := getJSON(t, base+"/api/discover")
	if disc["features"].(map[string]any)["mcp"] != true {
		t.Errorf("features %v", disc["features"])
	}
	var posts []string
	for _, e := range disc["endpoints"].([]any) {
		if e := e.(map[string]any); e["method"] == "POST" && strings.Contains(e["path"].(string), "mcp") {
			posts = append(posts, e["path"].(string))
		}
	}
	if fmt.Sprint(posts) != "[/api/mcp /mcp]" {
		t.Errorf("catalog MCP endpoints %v", posts)
	}
}

// TestMCPNoAuthorityOverTheChain is rule 5 on the real chain: every tool,
// called with hostile arguments, leaves the chain exactly as it was.
func TestMCPNoAuthorityOverTheChain(t *testing.T) {
	base, chain := mcpServer(t)
	version, count, head := chain.Version(), chain.Count(), chain.Head().Hash()
	cs := connect(t, base+mcp.Endpoint)
	hostile := []map[string]any{{}, {"path": "../../../../etc/passwd"}, {"from": 1 << 52, "limit": 100}, {"from": -1}, {"limit": 1 << 40},
		{"number": 1 << 30}, {"query": "/etc/passwd"}, {"append": map[string]any{"kind": "x"}}, {"to": "bridge@example.org", "message": "send"}}
	for _, tool := range []string{"ledger_verdict", "chain_status", "strict_table_rows", "constitution_article", "node_roster", "endpoint_catalog"} {
		for _, args := range hostile {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Errorf("%s %v: %v", tool, args, err)
				continue
			}
			if raw, _ := json.Marshal(res); strings.Contains(string(raw), "root:x:0:0") {
				t.Errorf("%s %v: %s", tool, args, raw)
			}
		}
	}
	if chain.Version() != version || chain.Count() != count || chain.Head().Hash() != head {
		t.Errorf("the chain changed: version %d -> %d, count %d -> %d", version, chain.Version(), count, chain.Count())
	}
}

// mcpMeta is the _meta member every request carries.
const mcpMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// mcpListBody is a valid tools/list request.
const mcpListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + mcpMeta + `}}`

// mcpRaw builds a raw request to an MCP endpoint with the headers of a
// valid tools/list request, then extra ones; length < 0 sets no
// Content-Length.
func mcpRaw(method, target, body string, length int, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", method, target)
	header := append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		mcp.HeaderProtocolVersion, mcp.ProtocolVersion, mcp.HeaderMethod, "tools/list"}, extra...)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
		}
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	return b.String() + "\r\n" + body
}

// checkRPCError checks a JSON-RPC refusal: the status, the code, no id,
// application/json and the headers every API response carries.
func checkRPCError(t *testing.T, resp *http.Response, body []byte, status int, code int64) {
	t.Helper()
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64
			Message string
		}
	}
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &e) != nil ||
		e.JSONRPC != "2.0" || e.Error.Code != code || e.Error.Message == "" || e.ID != nil {
		t.Errorf("%d %s %s; want %d with code %d", resp.StatusCode, resp.Header.Get("Content-Type"), body, status, code)
	}
	checkCommonHeaders(t, resp, true)
}

// TestMCPThroughThePipeline: the MCP endpoints sit behind the server's
// request pipeline and HTTP hygiene (methods, Host, body limits before the
// body is read, Expect, strict JSON, timeouts), and every refusal made
// there, before routing or after, is a JSON-RPC error: never problem JSON
// or text. MCP requests, being reads, are not rate limited.
func TestMCPThroughThePipeline(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	srv := newTestServer(t, Options{Chain: testChain(t), ReadTimeout: readTimeout, PostLimit: Limit{2, time.Minute}})
	addr := listenLoopback(t, srv.Serve)
	for _, tc := range []struct {
		desc, raw string
		status    int
		code      int64
		allow     string
	}{
		{"GET", "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", 405, mcp.CodeInvalidRequest, "POST, OPTIONS"},
		{"HEAD", "HEAD /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, 0, "POST, OPTIONS"},
		{"DELETE, as a client ending a session", "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: 1\r\n\r\n", 405, mcp.CodeInvalidRequest, "POST, OPTIONS"},
		{"PUT with a body", mcpRaw("PUT", "/api/mcp", mcpListBody, len(mcpListBody)), 405, mcp.CodeInvalidRequest, "POST, OPTIONS"},
		{"unknown method", "BREW /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, mcp.CodeInvalidRequest, ""},
		{"no Host", strings.Replace(mcpRaw("POST", "/mcp", mcpListBody, len(mcpListBody)), "Host: 127.0.0.1\r\n", "", 1), 400, mcp.CodeInvalidRequest, ""},
		{"declared body over the route's limit", mcpRaw("POST", "/mcp", "", mcpBodyLimit+1), 413, mcp.CodeInvalidRequest, ""},
		{"declared body over the server's limit", mcpRaw("POST", "/API/MCP/", "", MaxBodyBytes+1), 413, mcp.CodeInvalidRequest, ""},
		{"chunked body over the route's limit", mcpRaw("POST", "/mcp", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", mcpBodyLimit+1, strings.Repeat(" ", mcpBodyLimit+1)), -1,
			"Transfer-Encoding", "chunked"), 413, mcp.CodeInvalidRequest, ""},
		{"not JSON", mcpRaw("POST", "/mcp", mcpListBody, len(mcpListBody), "Content-Type", "text/plain"), 415, mcp.CodeInvalidRequest, ""},
		{"a charset other than utf-8", mcpRaw("POST", "/mcp", mcpListBody, len(mcpListBody), "Content-Type", "application/json; charset=latin1"), 415, mcp.CodeInvalidRequest, ""},
		{"malformed JSON", mcpRaw("POST", "/mcp", `{"jsonrpc":`, 11), 400, mcp.CodeParseError, ""},
		{"data after the request", mcpRaw("POST", "/mcp", mcpListBody+"{}", len(mcpListBody)+2), 400, mcp.CodeParseError, ""},
		{"invalid UTF-8", mcpRaw("POST", "/mcp", "{\"id\":\"\xff\"}", 10), 400, mcp.CodeParseError, ""},
		{"a member twice", mcpRaw("POST", "/mcp", `{"id":1,"id":2}`, 15), 400, mcp.CodeInvalidRequest, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			rc := dial(t, addr)
			rc.send(tc.raw)
			method, _, _ := strings.Cut(tc.raw, " ")
			resp, body := rc.response(method)
			if resp.Header.Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", resp.Header.Get("Allow"), tc.allow)
			}
			if method == "HEAD" {
				if resp.StatusCode != tc.status || len(body) != 0 || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
				return
			}
			checkRPCError(t, resp, body, tc.status, tc.code)
		})
	}
	t.Run("OPTIONS", func(t *testing.T) {
		resp, body := exchange(t, addr, "OPTIONS", "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		if resp.StatusCode != 204 || resp.Header.Get("Allow") != "POST, OPTIONS" || len(body) != 0 {
			t.Errorf("%d, Allow %q: %s", resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	})
	t.Run("Expect: 100-continue", func(t *testing.T) {
		rc := dial(t, addr)
		rc.send(mcpRaw("POST", "/mcp", "", mcpBodyLimit+1, "Expect", "100-continue"))
		resp, body := rc.response("POST")
		checkRPCError(t, resp, body, 413, mcp.CodeInvalidRequest)
		rc = dial(t, addr)
		rc.send(mcpRaw("POST", "/mcp", "", len(mcpListBody), "Expect", "100-continue"))
		if resp, _ := rc.response("POST"); resp.StatusCode != 100 {
			t.Fatalf("%d, want 100 Continue", resp.StatusCode)
		}
		rc.send(mcpListBody)
		if resp, body := rc.response("POST"); resp.StatusCode != 200 || !strings.Contains(string(body), `"tools"`) {
			t.Errorf("%d %.200s", resp.StatusCode, body)
		}
	})
	t.Run("half a body times out", func(t *testing.T) {
		rc := dial(t, addr)
		rc.send(mcpRaw("POST", "/mcp", mcpListBody[:20], len(mcpListBody)))
		closed, sent := rc.closed(5 * time.Second)
		if !closed {
			t.Fatal("still open")
		}
		if len(sent) > 0 { // a 408, or nothing
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(sent)), nil)
			if err != nil {
				t.Fatalf("%v: %q", err, sent)
			}
			body, _ := io.ReadAll(resp.Body)
			checkRPCError(t, resp, body, 408, mcp.CodeInvalidRequest)
		}
	})
	t.Run("not rate limited", func(t *testing.T) {
		// Far over the POST limit of 2 per minute, on one connection.
		rc := dial(t, addr)
		for i := range 20 {
			rc.send(mcpRaw("POST", []string{"/mcp", "/api/mcp"}[i%2], mcpListBody, len(mcpListBody)))
			if resp, body := rc.response("POST"); resp.StatusCode != 200 {
				t.Fatalf("request %d: %d %.200s", i, resp.StatusCode, body)
			}
		}
	})
}

// TestMCPDescribedInThePipeline: the description documents the MCP
// endpoints' refusals as JSON-RPC and their reads as unlimited.
func TestMCPDescribedInThePipeline(t *testing.T) {
	proof, _, err := Documents(*testSite())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info  struct{ Description string }
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]json.RawMessage
			}
			RateLimit json.RawMessage `json:"x-rate-limit"` // false, or a route's own limit

			MaxBodyBytes int `json:"x-max-body-bytes"`
		}
	}
	if err := json.Unmarshal(proof, &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{mcp.Endpoint, mcp.APIEndpoint} {
		post := doc.Paths[path]["post"]
		if string(post.RateLimit) != "false" || post.MaxBodyBytes != mcpBodyLimit {
			t.Errorf("%s: x-rate-limit %s, x-max-body-bytes %d", path, post.RateLimit, post.MaxBodyBytes)
		}
		for code, r := range post.Responses {
			if _, ok := r.Content["application/json"]; !ok || len(r.Content) != 1 || code == "429" {
				t.Errorf("%s %s: %v", path, code, r.Content)
			}
		}
	}
	if !strings.Contains(doc.Info.Description, "not rate-limited (x-rate-limit: false)") {
		t.Errorf("description: %q", doc.Info.Description)
	}
}

// structured returns a tool result's structured content, and checks that
// its text content says the same.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var doc, text map[string]any
	json.Unmarshal(raw, &doc)
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || json.Unmarshal([]byte(tc.Text), &text) != nil || !equalJSON(text, doc) {
		t.Errorf("text content differs from structured content: %+v", res.Content[0])
	}
	return doc
}

func equalJSON(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// watchedSource is the live edge's Source, counting the reads of the fast
// path apart: it alone passes the request's own fasthttp context (the SDK
// passes a context of its own).
type watchedSource struct {
	mcpSource
	fast, sdk atomic.Int64
}

func (w *watchedSource) note(ctx context.Context) {
	if _, ok := ctx.(*fasthttp.RequestCtx); ok {
		w.fast.Add(1)
	} else {
		w.sdk.Add(1)
	}
}

func (w *watchedSource) Verdict(ctx context.Context) (json.RawMessage, error) {
	w.note(ctx)
	return w.mcpSource.Verdict(ctx)
}

func (w *watchedSource) ChainStatus(ctx context.Context) (json.RawMessage, error) {
	w.note(ctx)
	return w.mcpSource.ChainStatus(ctx)
}

func (w *watchedSource) Nodes(ctx context.Context) (json.RawMessage, error) {
	w.note(ctx)
	return w.mcpSource.Nodes(ctx)
}

func (w *watchedSource) Discovery(ctx context.Context) (json.RawMessage, error) {
	w.note(ctx)
	return w.mcpSource.Discovery(ctx)
}

// mountMCP serves an MCP server on its own fiber app on 127.0.0.1.
func mountMCP(t *testing.T, src mcp.Source, opts mcp.Options) string {
	t.Helper()
	srv, err := mcp.New(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post(mcp.Endpoint, srv.Serve)
	return "http://" + listenLoopback(t, app.Listener) + mcp.Endpoint
}

// generatedAtMember matches a generated_at member, in a document or in a JSON
// string holding one.
var generatedAtMember = regexp.MustCompile(`generated_at(\\?)":(\\?)"[0-9T:.Z+-]+`)

// TestMCPFastPathIsTheSDK holds the fast path to the SDK on the live edge's
// own documents and schemas: every document tool is answered on the fast
// path, with the SDK's bytes (generated_at aside, which is each read's own).
func TestMCPFastPathIsTheSDK(t *testing.T) {
	srv := newTestServer(t, Options{Chain: testChain(t)})
	d := srv.define(newApp(nil), false)
	opts := mcp.Options{BaseURL: srv.site.BaseURL, APIURL: srv.site.APIURL, Version: srv.opts.Version, Schemas: d.mcpSchemas()}
	watched := &watchedSource{mcpSource: mcpSource{d}}
	fast := mountMCP(t, watched, opts)
	opts.SDKOnly = true
	reference := mountMCP(t, mcpSource{d}, opts)
	post := func(url, tool, args string) []byte {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"` + tool + `"` + args + `,` + mcpMeta + `}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", mcp.HeaderProtocolVersion: mcp.ProtocolVersion,
			mcp.HeaderMethod: "tools/call", mcp.HeaderName: tool} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"structuredContent"`)) {
			t.Fatalf("%s: %d %s", tool, resp.StatusCode, b)
		}
		return generatedAtMember.ReplaceAll(b, []byte(`generated_at$1":$2"T`))
	}
	for _, tool := range []string{"ledger_verdict", "chain_status", "node_roster", "endpoint_catalog"} {
		for _, args := range []string{"", `,"arguments":{}`} {
			fastBefore := watched.fast.Load()
			got, want := post(fast, tool, args), post(reference, tool, args)
			if watched.fast.Load() != fastBefore+1 || watched.sdk.Load() != 0 {
				t.Errorf("%s%s: not answered on the fast path (fast reads %d, SDK reads %d)", tool, args, watched.fast.Load()-fastBefore, watched.sdk.Load())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s%s:\nfast path %s\nSDK       %s", tool, args, got, want)
			}
		}
	}
}

// TestMCPOutputsConformToSchemas: every tool's output, on the live edge's
// own documents, conforms to the output schema tools/list declares for it,
// checked by a validator independent of the SDK's (formats asserted). The
// fast path validates a document once per version, the SDK on every call;
// this is the claim both rest on.
func TestMCPOutputsConformToSchemas(t *testing.T) {
	base, _ := mcpServer(t)
	cs := connect(t, base+mcp.Endpoint)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"strict_table_rows": map[string]any{"from": 150, "limit": 10}, "constitution_article": map[string]any{"query": "gate"}}
	for _, tool := range list.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			c := jsonschema.NewCompiler()
			c.AssertFormat()
			raw, _ := json.Marshal(tool.OutputSchema)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.AddResource("urn:proofsite:mcp:"+tool.Name, doc); err != nil {
				t.Fatal(err)
			}
			schema, err := c.Compile("urn:proofsite:mcp:" + tool.Name)
			if err != nil {
				t.Fatalf("the output schema does not compile: %v", err)
			}
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.Name, Arguments: args[tool.Name]})
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			out, _ := json.Marshal(res.StructuredContent)
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Errorf("the output does not conform to its schema: %v", err)
			}
		})
	}
}

// TestDescribeAsServed: the description a build publishes (Describe, which
// registers the MCP routes without building the MCP server) is the one a
// server with every optional route defines, byte for byte, and answers the
// same paths; with site URLs the MCP server refuses, neither has the MCP
// routes.
func TestDescribeAsServed(t *testing.T) {
	evaluation, _ := testEvaluation(t)
	srv, _ := newAIServer(t, aiSetup{eval: evaluation})
	d, err := Describe(*srv.site)
	if err != nil {
		t.Fatal(err)
	}
	full := srv.define(newApp(nil), false)
	served, err := json.MarshalIndent(full.proof.OpenAPI(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.OpenAPI, append(served, '\n')) {
		t.Error("Describe's OpenAPI document is not the served definition's")
	}
	if !reflect.DeepEqual(d.Endpoints, full.catalog()) {
		t.Error("Describe's endpoints are not the served definition's")
	}
	for _, e := range d.Endpoints {
		if !d.Answers(e.Path) || !full.serves(e.Path) {
			t.Errorf("%s %s: Describe answers %v, the server %v", e.Method, e.Path, d.Answers(e.Path), full.serves(e.Path))
		}
	}

	site := *testSite()
	site.BaseURL = "not a url"
	d, err = Describe(site)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{mcp.Endpoint, mcp.APIEndpoint, mcp.ManifestPath, mcp.ToolsPath} {
		if d.Answers(path) {
			t.Errorf("Describe answers %s for a site whose URL the MCP server refuses", path)
		}
	}
}
