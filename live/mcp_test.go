package live

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proofsite/proofsite/live/mcp"
)

// mcpServer starts the live edge over a real chain on 127.0.0.1.
func mcpServer(t *testing.T) (base string, chain Chain) {
	t.Helper()
	c := testChain(t)
	return serveLoopback(t, newTestServer(t, Options{Chain: c})), c
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
		})
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

var _ = maps.Keys[map[string]int]
var _ = strings.Cut
