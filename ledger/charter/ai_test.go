package charter

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestAIProblems(t *testing.T) {
	ok := AINode{Designation: "S1_PLEX", Provider: ProviderAnthropic, Model: "m", KeyEnv: "ANTHROPIC_API_KEY"}
	with := func(f func(*AINode)) AI {
		n := ok
		f(&n)
		return AI{Nodes: []AINode{n}}
	}
	for _, tc := range []struct {
		desc     string
		ai       AI
		path     string // "" for valid
		contains string
	}{
		{"empty", AI{}, "", ""},
		{"anthropic", with(func(*AINode) {}), "", ""},
		{"ollama without key", with(func(n *AINode) {
			n.Provider, n.KeyEnv, n.BaseURL = ProviderOpenAI, "", "http://127.0.0.1:11434/v1"
		}), "", ""},
		{"offline", with(func(n *AINode) { n.Provider, n.Model, n.KeyEnv = ProviderOffline, "", "" }), "", ""},
		{"airlock on a provider", with(func(n *AINode) { n.Designation = "S17_LUMEN" }), "", ""},
		{"openai voice", AI{Voice: AIVoice{Provider: "openai", Model: "gpt-4o-mini-tts", KeyEnv: "OPENAI_API_KEY"}}, "", ""},
		{"espeak voice", AI{Voice: AIVoice{Provider: "espeak"}}, "", ""},
		{"unknown node", with(func(n *AINode) { n.Designation = "S8_ATLAS" }), "$.ai.nodes[0].designation", "is not a node that answers"},
		{"listed twice", AI{Nodes: []AINode{ok, ok}}, "$.ai.nodes[1].designation", "listed twice"},
		{"unknown provider", with(func(n *AINode) { n.Provider = "openai-compatible" }), "$.ai.nodes[0].provider", "is not anthropic, openai or offline"},
		{"anthropic without key_env", with(func(n *AINode) { n.KeyEnv = "" }), "$.ai.nodes[0].provider", "needs model and key_env"},
		{"anthropic without model", with(func(n *AINode) { n.Model = "" }), "$.ai.nodes[0].provider", "needs model and key_env"},
		{"openai without key or url", with(func(n *AINode) { n.Provider, n.KeyEnv = ProviderOpenAI, "" }), "$.ai.nodes[0].provider", "needs model, and key_env or base_url"},
		{"offline with model", with(func(n *AINode) { n.Provider, n.KeyEnv = ProviderOffline, "" }), "$.ai.nodes[0].provider", "takes no model"},
		{"bad key_env", with(func(n *AINode) { n.KeyEnv = "sk-live-abc" }), "$.ai.nodes[0].key_env", "never a key"},
		{"base url scheme", with(func(n *AINode) { n.BaseURL = "ftp://x" }), "$.ai.nodes[0].base_url", "without credentials"},
		{"base url credentials", with(func(n *AINode) { n.BaseURL = "https://user:pw@x" }), "$.ai.nodes[0].base_url", "without credentials"},
		{"relative base url", with(func(n *AINode) { n.BaseURL = "/v1" }), "$.ai.nodes[0].base_url", "without credentials"},
		{"node timeout", with(func(n *AINode) { n.Timeout = Duration(time.Hour) }), "$.ai.nodes[0].timeout", "timeout 1h0m0s is outside"},
		{"timeout", AI{Timeout: Duration(-time.Second)}, "$.ai.timeout", "timeout -1s is outside"},
		{"max tokens", AI{MaxTokens: 1 << 20}, "$.ai.max_tokens", "max_tokens 1048576 is outside"},
		{"voice provider", AI{Voice: AIVoice{Provider: "festival"}}, "$.ai.voice.provider", "is not espeak or openai"},
		{"openai voice without key", AI{Voice: AIVoice{Provider: "openai", Model: "m"}}, "$.ai.voice.provider", "needs model and key_env"},
		{"espeak voice with model", AI{Voice: AIVoice{Model: "m"}}, "$.ai.voice.provider", "takes no model"},
		{"anthropic judge", AI{Judge: AIJudge{Provider: ProviderAnthropic, Model: "m", KeyEnv: "JUDGE_KEY", Timeout: Duration(5 * time.Second)}}, "", ""},
		{"local judge", AI{Judge: AIJudge{Provider: ProviderOpenAI, Model: "m", BaseURL: "http://127.0.0.1:11434/v1"}}, "", ""},
		{"offline judge", AI{Judge: AIJudge{Provider: ProviderOffline}}, "$.ai.judge.provider", "needs no judge"},
		{"judge without provider", AI{Judge: AIJudge{Model: "m"}}, "$.ai.judge.provider", "needs a provider"},
		{"judge without key", AI{Judge: AIJudge{Provider: ProviderAnthropic, Model: "m"}}, "$.ai.judge.provider", "needs model and key_env"},
		{"judge without model", AI{Judge: AIJudge{Provider: ProviderOpenAI, KeyEnv: "K"}}, "$.ai.judge.provider", "needs model"},
		{"judge key", AI{Judge: AIJudge{Provider: ProviderOpenAI, Model: "m", KeyEnv: "sk-live-abc"}}, "$.ai.judge.key_env", "never a key"},
		{"judge base url", AI{Judge: AIJudge{Provider: ProviderOpenAI, Model: "m", BaseURL: "https://u:p@x"}}, "$.ai.judge.base_url", "without credentials"},
		{"judge timeout", AI{Judge: AIJudge{Provider: ProviderOpenAI, Model: "m", KeyEnv: "K", Timeout: Duration(time.Hour)}}, "$.ai.judge.timeout", "outside"},
		{"judge max tokens", AI{Judge: AIJudge{Provider: ProviderOpenAI, Model: "m", KeyEnv: "K", MaxTokens: -1}}, "$.ai.judge.max_tokens", "outside"},
	} {
		got := tc.ai.Problems()
		if tc.path == "" {
			if len(got) > 0 {
				t.Errorf("%s: %v", tc.desc, got)
			}
			continue
		}
		if len(got) == 0 || got[0].Path != tc.path || !strings.Contains(got[0].Message, tc.contains) {
			t.Errorf("%s: %v, want %s: ...%s...", tc.desc, got, tc.path, tc.contains)
		}
		if n := tc.ai.Nodes; len(n) > 0 && (strings.Contains(got[0].Message, n[0].KeyEnv) && n[0].KeyEnv != "" || strings.Contains(got[0].Message, n[0].BaseURL) && n[0].BaseURL != "") {
			t.Errorf("%s: %q quotes key_env or base_url, which may hold a key", tc.desc, got[0].Message)
		}
	}
}

func TestAIKeyEnvs(t *testing.T) {
	a := AI{Nodes: []AINode{{KeyEnv: "OPENAI_API_KEY"}, {}, {KeyEnv: "ANTHROPIC_API_KEY"}, {KeyEnv: "OPENAI_API_KEY"}},
		Voice: AIVoice{KeyEnv: "TTS_KEY"}, Judge: AIJudge{KeyEnv: "JUDGE_KEY"}}
	if got := strings.Join(a.KeyEnvs(), ","); got != "ANTHROPIC_API_KEY,JUDGE_KEY,OPENAI_API_KEY,TTS_KEY" {
		t.Errorf("KeyEnvs = %s", got)
	}
}

// TestValidEnvName checks validEnvName against the bounded pattern it
// stands for, at and around its length bound.
func TestValidEnvName(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,127}$`)
	inputs := []string{"", "A", "_", "1A", "a", "A B", "AÉ", "ANTHROPIC_API_KEY"}
	for n := range 135 {
		inputs = append(inputs, "K"+strings.Repeat("9", n), "_"+strings.Repeat("A", n)+"-")
	}
	for _, in := range inputs {
		if got, want := validEnvName(in), rule.MatchString(in); got != want {
			t.Errorf("validEnvName(%q) (%d bytes) = %v, want %v", in, len(in), got, want)
		}
	}
}
