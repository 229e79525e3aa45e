package ai_test

import (
	"context"
	"errors"
	"github.com/proofsite/proofsite/ledger/charter"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
)

const testKey = "sk-test-SECRET-0123456789"

// wire is one provider wire format under test.
type wire struct {
	kind    ai.Kind
	model   string
	server  func(testing.TB, aitest.Script) *aitest.Server
	baseURL func(*aitest.Server) string
}

var wires = []wire{
	{ai.KindAnthropic, aitest.AnthropicModel, aitest.NewAnthropicServer, func(s *aitest.Server) string { return s.URL }},
	{ai.KindOpenAI, aitest.OpenAIModel, aitest.NewOpenAIServer, func(s *aitest.Server) string { return s.URL + "/v1" }},
}

// node builds a registry whose S1_PLEX uses the wire's provider at srv,
// with the test key and the given timeout, and returns that node.
func (w wire) node(t *testing.T, baseURL string, timeout time.Duration) *ai.Node {
	t.Helper()
	cfg := ai.Config{Timeout: charter.Duration(timeout), Nodes: []ai.NodeConfig{{
		Designation: "S1_PLEX", Provider: w.kind, Model: w.model, BaseURL: baseURL, KeyEnv: "TEST_PROVIDER_KEY",
	}}}
	reg, err := ai.NewRegistry(cfg, ai.Options{Keys: map[string]string{"TEST_PROVIDER_KEY": testKey}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := reg.Chat("S1_PLEX")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func collect(t *testing.T, n *ai.Node, msg string) (ai.Reply, []string, error) {
	t.Helper()
	var deltas []string
	r, err := n.Stream(context.Background(), msg, func(d string) error { deltas = append(deltas, d); return nil })
	return r, deltas, err
}

func TestProvidersAnswer(t *testing.T) {
	const text = "The ledger is public; anyone may verify it. — ünïcödé ✓"
	for _, w := range wires {
		t.Run(string(w.kind), func(t *testing.T) {
			srv := w.server(t, aitest.Script{Text: text, Model: w.model + "-20260101", Chunks: 4})
			n := w.node(t, w.baseURL(srv), 5*time.Second)

			got, err := n.Reply(context.Background(), "  Who may verify the ledger?  ")
			if err != nil {
				t.Fatalf("Reply: %v", err)
			}
			want := ai.Reply{Node: "S1_PLEX", Provider: w.kind, Model: w.model + "-20260101", Text: text, Citations: []ai.Citation{}}
			if got.Node != want.Node || got.Provider != want.Provider || got.Model != want.Model || got.Text != want.Text || got.Notice != "" {
				t.Errorf("Reply = %+v, want %+v", got, want)
			}
			checkRequest(t, w, srv.Last(), false)

			got, deltas, err := collect(t, n, "Who may verify the ledger?")
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.Text != text || strings.Join(deltas, "") != text || len(deltas) != 4 {
				t.Errorf("Stream = %q in %d deltas %q, want %q in 4", got.Text, len(deltas), deltas, text)
			}
			if got.Model != w.model+"-20260101" || got.Provider != w.kind || got.Node != "S1_PLEX" {
				t.Errorf("Stream names %s/%s/%s", got.Node, got.Provider, got.Model)
			}
			checkRequest(t, w, srv.Last(), true)
			if srv.Requests() != 2 {
				t.Errorf("server saw %d requests, want 2", srv.Requests())
			}
		})
	}
}

// checkRequest checks what the SDK put on the wire: the path, the key in
// the provider's header, the model, the system text and the one message.
func checkRequest(t *testing.T, w wire, r aitest.Recorded, stream bool) {
	t.Helper()
	switch w.kind {
	case ai.KindAnthropic:
		if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != testKey || r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("anthropic request: path %s, x-api-key %q, anthropic-version %q", r.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Version"))
		}
		sys, _ := r.Body["system"].([]any)
		if len(sys) != 1 || !strings.Contains(sys[0].(map[string]any)["text"].(string), "S1_PLEX") {
			t.Errorf("anthropic system = %v", r.Body["system"])
		}
		if r.Body["max_tokens"] != float64(ai.DefaultMaxTokens) {
			t.Errorf("max_tokens = %v", r.Body["max_tokens"])
		}
	case ai.KindOpenAI:
		if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("openai request: path %s, authorization %q", r.Path, r.Header.Get("Authorization"))
		}
		msgs, _ := r.Body["messages"].([]any)
		if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["role"] != "user" {
			t.Errorf("openai messages = %v", r.Body["messages"])
		}
	}
	if r.Body["model"] != w.model {
		t.Errorf("model = %v, want %s", r.Body["model"], w.model)
	}
	if got := r.Body["stream"] == true; got != stream {
		t.Errorf("stream = %v, want %v", r.Body["stream"], stream)
	}
	if !strings.Contains(mustString(r.Body), "Who may verify the ledger?") {
		t.Errorf("the message is not in the request: %v", r.Body)
	}
}

func mustString(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return b.String()
}

func TestProviderFailures(t *testing.T) {
	leaky := func(w wire) string {
		if w.kind == ai.KindAnthropic {
			return `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`
		}
		return `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	}
	cases := []struct {
		desc    string
		script  func(w wire) aitest.Script
		stream  bool
		timeout time.Duration
		is      error
		reason  ai.Reason
		status  int
	}{
		{desc: "401 echoing the key", script: func(w wire) aitest.Script { return aitest.Script{Status: 401, ErrorBody: leaky(w)} }, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 401},
		{desc: "401 echoing the key, streaming", stream: true, script: func(w wire) aitest.Script { return aitest.Script{Status: 401, ErrorBody: leaky(w)} }, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 401},
		{desc: "429 is not retried", script: func(wire) aitest.Script { return aitest.Script{Status: 429} }, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 429},
		{desc: "500 is not retried", script: func(wire) aitest.Script { return aitest.Script{Status: 500} }, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 500},
		{desc: "503 with an HTML body", script: func(wire) aitest.Script {
			return aitest.Script{Status: 503, ErrorBody: "<html>" + testKey + "</html>"}
		}, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 503},
		{desc: "529 overloaded, streaming", stream: true, script: func(wire) aitest.Script { return aitest.Script{Status: 529} }, is: ai.ErrProviderFailed, reason: ai.ReasonStatus, status: 529},
		{desc: "timeout", timeout: 150 * time.Millisecond, script: func(wire) aitest.Script { return aitest.Script{Delay: 3 * time.Second} }, is: ai.ErrProviderTimeout, reason: ai.ReasonTimeout},
		{desc: "timeout, streaming", stream: true, timeout: 150 * time.Millisecond, script: func(wire) aitest.Script { return aitest.Script{Delay: 3 * time.Second} }, is: ai.ErrProviderTimeout, reason: ai.ReasonTimeout},
		{desc: "malformed JSON", script: func(wire) aitest.Script { return aitest.Script{Malformed: true} }, is: ai.ErrProviderFailed, reason: ai.ReasonMalformed},
		{desc: "no text", script: func(wire) aitest.Script { return aitest.Script{Empty: true} }, is: ai.ErrProviderFailed, reason: ai.ReasonEmpty},
		{desc: "no text, streaming", stream: true, script: func(wire) aitest.Script { return aitest.Script{Empty: true} }, is: ai.ErrProviderFailed, reason: ai.ReasonEmpty},
		{desc: "error event mid-stream", stream: true, script: func(wire) aitest.Script { return aitest.Script{StreamError: true} }, is: ai.ErrProviderFailed, reason: ai.ReasonStreamError},
		{desc: "stream cut before its end", stream: true, script: func(wire) aitest.Script { return aitest.Script{Truncate: true} }, is: ai.ErrProviderFailed, reason: ai.ReasonTruncated},
	}
	for _, w := range wires {
		for _, tc := range cases {
			t.Run(string(w.kind)+"/"+tc.desc, func(t *testing.T) {
				srv := w.server(t, tc.script(w))
				timeout := tc.timeout
				if timeout == 0 {
					timeout = 5 * time.Second
				}
				n := w.node(t, w.baseURL(srv), timeout)
				var err error
				if tc.stream {
					_, _, err = collect(t, n, "Who may verify the ledger?")
				} else {
					_, err = n.Reply(context.Background(), "Who may verify the ledger?")
				}
				checkProviderError(t, err, tc.is, ai.ProviderError{Node: "S1_PLEX", Provider: w.kind, Model: w.model, Reason: tc.reason, Status: tc.status})
				if got := srv.Requests(); got != 1 {
					t.Errorf("server saw %d requests, want exactly 1 (no retry)", got)
				}
			})
		}
	}
}

func checkProviderError(t *testing.T, err, is error, want ai.ProviderError) {
	t.Helper()
	if !errors.Is(err, is) {
		t.Fatalf("error = %v, want %v", err, is)
	}
	var pe *ai.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *ProviderError", err)
	}
	if *pe != want {
		t.Errorf("ProviderError = %+v, want %+v", *pe, want)
	}
	for _, leak := range []string{testKey, "SECRET", "api key", "x-api-key", "html", "Overloaded", "server had an error"} {
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(leak)) {
			t.Errorf("error text %q carries provider text %q", err.Error(), leak)
		}
	}
}

func TestProviderUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	for _, w := range wires {
		t.Run(string(w.kind), func(t *testing.T) {
			_, err := w.node(t, addr, 5*time.Second).Reply(context.Background(), "hello there")
			checkProviderError(t, err, ai.ErrProviderFailed, ai.ProviderError{Node: "S1_PLEX", Provider: w.kind, Model: w.model, Reason: ai.ReasonTransport})
		})
	}
}

func TestProviderCallerCancels(t *testing.T) {
	for _, w := range wires {
		t.Run(string(w.kind), func(t *testing.T) {
			srv := w.server(t, aitest.Script{Delay: 3 * time.Second})
			n := w.node(t, w.baseURL(srv), 5*time.Second)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			_, err := n.Reply(ctx, "hello there")
			if !errors.Is(err, context.Canceled) || errors.Is(err, ai.ErrProviderFailed) {
				t.Errorf("error = %v, want context.Canceled and no provider failure", err)
			}
		})
	}
}

// TestProvidersIgnoreEnvironment sets every variable the SDKs read by
// default to values that would break or change the call, and checks that
// the call still goes where the configuration says, with its key and no
// header from the environment.
func TestProvidersIgnoreEnvironment(t *testing.T) {
	dead := "http://127.0.0.1:9" // discard port: nothing answers
	for k, v := range map[string]string{
		"ANTHROPIC_API_KEY": "env-anthropic-key", "ANTHROPIC_AUTH_TOKEN": "env-token", "ANTHROPIC_BASE_URL": dead,
		"ANTHROPIC_CUSTOM_HEADERS": "X-From-Env: anthropic", "ANTHROPIC_PROFILE": "missing-profile",
		"ANTHROPIC_CONFIG_DIR": t.TempDir(), "ANTHROPIC_OPEN_TELEMETRY": "true",
		"OPENAI_API_KEY": "env-openai-key", "OPENAI_ADMIN_KEY": "env-admin", "OPENAI_BASE_URL": dead,
		"OPENAI_ORG_ID": "org-env", "OPENAI_PROJECT_ID": "proj-env", "OPENAI_CUSTOM_HEADERS": "X-From-Env: openai",
		"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": "",
	} {
		t.Setenv(k, v)
	}
	for _, w := range wires {
		t.Run(string(w.kind), func(t *testing.T) {
			srv := w.server(t, aitest.Script{})
			if _, err := w.node(t, w.baseURL(srv), 5*time.Second).Reply(context.Background(), "Who may verify the ledger?"); err != nil {
				t.Fatalf("Reply: %v", err)
			}
			r := srv.Last()
			checkRequest(t, w, r, false)
			for name, vals := range r.Header {
				for _, v := range vals {
					if strings.Contains(v, "env") || strings.HasPrefix(strings.ToLower(name), "x-from-env") || strings.HasPrefix(strings.ToLower(name), "openai-") {
						t.Errorf("header %s: %s came from the environment", name, v)
					}
				}
			}

			// A provider built without a key sends none, even with keys in
			// the environment.
			var p ai.Provider
			var err error
			sdk := ai.SDKConfig{Model: w.model, BaseURL: w.baseURL(srv)}
			if w.kind == ai.KindAnthropic {
				p, err = ai.NewAnthropic(sdk)
			} else {
				p, err = ai.NewOpenAI(sdk)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(context.Background(), ai.Request{Message: "Who may verify the ledger?", MaxTokens: 10}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			h := srv.Last().Header
			if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" || h.Get("X-From-Env") != "" {
				t.Errorf("keyless provider sent Authorization %q, X-Api-Key %q, X-From-Env %q", h.Get("Authorization"), h.Get("X-Api-Key"), h.Get("X-From-Env"))
			}
		})
	}
}
