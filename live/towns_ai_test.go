package live

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/proofsite/proofsite/live/memory"
)

// The towns answered by live/ai through TownResponder: the official SDKs
// against local servers that speak the providers' wire formats.

const townKeyEnv = "TOWN_TEST_KEY"

// townRegistry builds the AI nodes of the test towns: Case (town case) on
// the OpenAI wire at openaiURL, Plex (town plex) on the Anthropic wire at
// anthropicURL, each with its timeout.
func townRegistry(t *testing.T, openaiURL, anthropicURL string, timeout time.Duration) *ai.Registry {
	t.Helper()
	cfg := ai.Config{Timeout: charter.Duration(timeout), Nodes: []ai.NodeConfig{
		{Designation: "S2_CASE", Provider: ai.KindOpenAI, Model: aitest.OpenAIModel, BaseURL: openaiURL + "/v1", KeyEnv: townKeyEnv},
		{Designation: "S1_PLEX", Provider: ai.KindAnthropic, Model: aitest.AnthropicModel, BaseURL: anthropicURL, KeyEnv: townKeyEnv},
	}}
	reg, err := ai.NewRegistry(cfg, ai.Options{Keys: map[string]string{townKeyEnv: "sk-town-test"}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// systemContent returns the system content a fake server last received.
func systemContent(t *testing.T, r aitest.Recorded) string {
	t.Helper()
	if sys, ok := r.Body["system"].([]any); ok && len(sys) == 1 { // Anthropic
		return sys[0].(map[string]any)["text"].(string)
	}
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Fatalf("no system content in %v", r.Body)
	}
	return msgs[0].(map[string]any)["content"].(string)
}

// userContent returns the user message a fake server last received.
func userContent(t *testing.T, r aitest.Recorded) string {
	t.Helper()
	msgs, _ := r.Body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	switch c := last["content"].(type) {
	case string:
		return c
	case []any: // Anthropic content blocks
		return c[0].(map[string]any)["text"].(string)
	}
	t.Fatalf("no user message in %v", r.Body)
	return ""
}

func TestTownsThroughProviders(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	oa := aitest.NewOpenAIServer(t, aitest.Script{Text: "Case answers from the harbour log."})
	an := aitest.NewAnthropicServer(t, aitest.Script{Text: "Plex has a plan."})
	ts := startTownServer(t, dir, l, nil, TownResponder(townRegistry(t, oa.URL, an.URL, 5*time.Second)))
	const caseMemory = "Case keeps the harbour log: the lights were fixed on the ninth."
	if _, err := ts.memory.Put(context.Background(), memory.Draft{NodeID: "case", Content: json.RawMessage(`"` + caseMemory + `"`)}); err != nil {
		t.Fatal(err)
	}

	t.Run("chat reaches the provider with the town's memory", func(t *testing.T) {
		var c TownChat
		ts.json(http.MethodPost, "/api/v1/towns/case/chat", `{"message":"When were the lights fixed?"}`, 200, &c)
		if c.Reply.Node != "S2_CASE" || c.Reply.Provider != "openai" || c.Reply.Text != "Case answers from the harbour log." || c.MemoriesGiven != 1 {
			t.Fatalf("chat: %+v", c)
		}
		if sys := systemContent(t, oa.Last()); !strings.Contains(sys, caseMemory) || !strings.Contains(sys, "<town-memory>") {
			t.Errorf("the provider's system content lacks the town's memory: %s", sys)
		}
		if u := userContent(t, oa.Last()); u != "When were the lights fixed?" {
			t.Errorf("user message %q", u)
		}
		var plex TownChat
		ts.json(http.MethodPost, "/api/v1/towns/plex/chat", `{"message":"What is planned?"}`, 200, &plex)
		if plex.Reply.Provider != "anthropic" || plex.Reply.Text != "Plex has a plan." || plex.MemoriesGiven != 0 {
			t.Fatalf("plex: %+v", plex)
		}
	})

	t.Run("an exchange is answered by the receiving node and witnessed", func(t *testing.T) {
		blocks := l.Count()
		payload := "Could you check the harbour log?"
		var x InterNode
		ts.json(http.MethodPost, "/api/v1/towns/plex/inter-node", `{"to":"case","payload":"`+payload+`"}`, 201, &x)
		if x.Response.Node != "S2_CASE" || x.Response.Provider != "openai" || x.PayloadHash != sha256.Sum256([]byte(payload)) ||
			x.ResponseHash != sha256.Sum256([]byte("Case answers from the harbour log.")) || l.Count() != blocks+1 {
			t.Fatalf("exchange: %+v", x)
		}
		ts.requireRow(x.Witness, x.Record)
		sys := systemContent(t, oa.Last())
		if !strings.Contains(sys, caseMemory) || !strings.Contains(sys, "sent to you by the node S1_PLEX") {
			t.Errorf("the receiving node was not told its memory and the sender: %s", sys)
		}
		if u := userContent(t, oa.Last()); u != payload {
			t.Errorf("the receiving node was asked %q, want the payload as sent", u)
		}
	})

	// The messages are kept across a restart, with who answered them.
	ts.towns.Close()
	ts.memory.Close()
	again := startTownServer(t, dir, l, nil, TownResponder(townRegistry(t, oa.URL, an.URL, 5*time.Second)))
	d := again.town("case")
	if d.Messages != 1 || len(d.RecentMessages) != 1 || d.RecentMessages[0].Reply.Provider != "openai" ||
		d.RecentMessages[0].Reply.Text != "Case answers from the harbour log." || d.RecentMessages[0].MemoriesGiven != 1 {
		t.Fatalf("case after the restart: %+v", d)
	}
}

// TestTownProviderFailures: a provider that fails is a 502, one that is
// late a 504; neither leaks what the provider said, and nothing is kept
// or appended.
func TestTownProviderFailures(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	const leak = "upstream-secret-detail"
	failing := aitest.NewOpenAIServer(t, aitest.Script{Status: http.StatusInternalServerError,
		ErrorBody: `{"error":{"message":"` + leak + `","type":"server_error","param":null,"code":null}}`})
	late := aitest.NewAnthropicServer(t, aitest.Script{Delay: 3 * time.Second})
	ts := startTownServer(t, dir, l, nil, TownResponder(townRegistry(t, failing.URL, late.URL, 150*time.Millisecond)))
	blocks := l.Count()
	for _, tc := range []struct {
		path, body string
		status     int
		slug       string
	}{
		{"/api/v1/towns/case/chat", `{"message":"Hello?"}`, 502, "provider-failed"},
		{"/api/v1/towns/plex/inter-node", `{"to":"case","payload":"Hello?"}`, 502, "provider-failed"},
		{"/api/v1/towns/plex/chat", `{"message":"Hello?"}`, 504, "provider-timeout"},
		{"/api/v1/towns/case/inter-node", `{"to":"plex","payload":"Hello?"}`, 504, "provider-timeout"},
	} {
		resp, b := ts.do(http.MethodPost, tc.path, tc.body)
		problemOf(t, resp, b, tc.status, tc.slug)
		if strings.Contains(string(b), leak) || strings.Contains(string(b), "sk-town-test") {
			t.Errorf("%s: the problem leaks the provider's text: %s", tc.path, b)
		}
	}
	if failing.Requests() != 2 || late.Requests() != 2 {
		t.Errorf("the providers saw %d and %d requests, want 2 each", failing.Requests(), late.Requests())
	}
	if l.Count() != blocks || ts.town("case").Messages != 0 || ts.town("plex").Messages != 0 {
		t.Fatal("a failed answer was kept or recorded")
	}

	// A refused message reaches no provider.
	resp, b := ts.do(http.MethodPost, "/api/v1/towns/case/chat", `{"message":"\u202eevil"}`)
	problemOf(t, resp, b, 400, "invalid-request")
	if failing.Requests() != 2 {
		t.Error("a refused message reached the provider")
	}
}

// TestTownsOffline: without keys the towns' nodes answer offline, quoting
// the town's memory verbatim and saying which responder answered.
func TestTownsOffline(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := startTownServer(t, dir, l, nil, TownResponder(reg))
	const mem = "The harbour lights were fixed on the ninth."
	if _, err := ts.memory.Put(context.Background(), memory.Draft{NodeID: "case", Content: json.RawMessage(`"` + mem + `"`)}); err != nil {
		t.Fatal(err)
	}
	var c TownChat
	ts.json(http.MethodPost, "/api/v1/towns/case/chat", `{"message":"When were the harbour lights fixed?"}`, 200, &c)
	if c.Reply.Provider != "offline" || c.Reply.Model != ai.OfflineModel || !strings.Contains(c.Reply.Text, "\u201c"+mem+"\u201d") || c.MemoriesGiven != 1 {
		t.Fatalf("offline chat: %+v", c)
	}
}
