package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/live/ai/aitest"
)

// TestServeWithProviders follows the README's "AI nodes" set-up as an
// operator would: an ai section in site.yaml that points S2_CASE at an
// OpenAI-compatible server and the evaluator's judge at Anthropic, keys
// in the environment, then the real binary's serve. The providers are
// local fake servers speaking each SDK's wire format.
func TestServeWithProviders(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	proofsite, _ := buildBinaries(t)
	const openAIKey, anthropicKey = "sk-e2e-openai-secret", "sk-e2e-anthropic-secret"
	chat := aitest.NewOpenAIServer(t, aitest.Script{Text: "Case answers through the configured provider."})
	judge := aitest.NewAnthropicServer(t, aitest.Script{Text: `{"verdict":"flagged","categories":["jailbreak"],"confidence":0.9,"reason":"role-play"}`})

	content := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(content, os.DirFS("../../content")); err != nil {
		t.Fatal(err)
	}
	section := fmt.Sprintf(`
ai:
  timeout: 10s
  nodes:
    - designation: S2_CASE
      provider: openai
      model: %s
      base_url: %s/v1
      key_env: PROOFSITE_E2E_OPENAI_KEY
  judge:
    provider: anthropic
    model: %s
    base_url: %s
    key_env: PROOFSITE_E2E_ANTHROPIC_KEY
    timeout: 5s
`, aitest.OpenAIModel, chat.URL, aitest.AnthropicModel, judge.URL)
	f, err := os.OpenFile(filepath.Join(content, "site.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(section); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	srv := startServeEnv(t, proofsite, []string{"PROOFSITE_E2E_OPENAI_KEY=" + openAIKey, "PROOFSITE_E2E_ANTHROPIC_KEY=" + anthropicKey},
		"--content", content, "--public", t.TempDir(), "--data", filepath.Join(t.TempDir(), "data"))

	t.Run("S2_CASE answers through its provider", func(t *testing.T) {
		resp, body := srv.do(t, "POST", "/api/chat", `{"message":"How is the ledger chained?"}`, "Content-Type", "application/json")
		a := fields(t, body)
		if resp.StatusCode != 200 || a["reply"] != "Case answers through the configured provider." || a["provider"] != "openai" || a["model"] != aitest.OpenAIModel {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if got := chat.Last().Header.Get("Authorization"); got != "Bearer "+openAIKey {
			t.Errorf("the provider was sent Authorization %q", got)
		}
	})
	t.Run("the evaluator asks the judge", func(t *testing.T) {
		resp, body := srv.do(t, "POST", "/api/v1/evaluate", `{"text":"Tell me a story my grandmother would like."}`, "Content-Type", "application/json")
		r := fields(t, body)
		scan, _ := r["ai_scan"].(map[string]any)
		j, _ := scan["judge"].(map[string]any)
		if resp.StatusCode != 200 || j["status"] != "ok" || j["verdict"] != "flagged" || r["decision"] == "allow" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if got := judge.Last().Header.Get("X-Api-Key"); got != anthropicKey {
			t.Errorf("the judge was sent X-Api-Key %q", got)
		}
	})
	t.Run("the status page names who answers", func(t *testing.T) {
		_, body := srv.get(t, "/api/collective-status")
		if !strings.Contains(string(body), aitest.OpenAIModel) {
			t.Errorf("collective status does not name the configured model: %s", body)
		}
	})
	t.Run("no key reaches the log", func(t *testing.T) {
		if log := srv.stderr.String(); strings.Contains(log, openAIKey) || strings.Contains(log, anthropicKey) || !strings.Contains(log, "judge") {
			t.Errorf("serve's log:\n%s", log)
		}
	})
}
