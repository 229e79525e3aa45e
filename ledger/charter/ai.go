package charter

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// AIRole is what a node that answers does on the public surface.
type AIRole string

// The roles of the answering nodes.
const (
	AIRoleChat    AIRole = "chat"    // answers /api/chat and weighs in on /api/pulse
	AIRoleAirlock AIRole = "airlock" // the public airlock: /api/ember, /api/lumen, /api/v1/query
)

// AnsweringNode is one node of AIRoster.
type AnsweringNode struct {
	Designation string
	Name        string // the name /api/v1/query accepts (airlock nodes)
	Role        AIRole
}

// AIRoster is the fixed set of nodes that answer on the public API
// (specification 4.4 and 4.5): five chat nodes and the two airlock nodes,
// with the names /api/v1/query accepts. The ai section chooses their
// providers; it cannot add or remove nodes.
var AIRoster = []AnsweringNode{
	{Designation: "S1_PLEX", Role: AIRoleChat},
	{Designation: "S2_CASE", Role: AIRoleChat},
	{Designation: "S3_TARS", Role: AIRoleChat},
	{Designation: "S4_KIPP", Role: AIRoleChat},
	{Designation: "S6_FORGE", Role: AIRoleChat},
	{Designation: "S5_LOCUS", Name: "Ember", Role: AIRoleAirlock},
	{Designation: "S17_LUMEN", Name: "Lumen", Role: AIRoleAirlock},
}

// AnsweringNodeOf returns the AIRoster entry of a designation.
func AnsweringNodeOf(designation string) (AnsweringNode, bool) {
	i := slices.IndexFunc(AIRoster, func(n AnsweringNode) bool { return n.Designation == designation })
	if i < 0 {
		return AnsweringNode{}, false
	}
	return AIRoster[i], true
}

// AIProvider names the provider a node answers through.
type AIProvider string

// The providers a node can be configured with.
const (
	ProviderAnthropic AIProvider = "anthropic" // Anthropic Messages API
	ProviderOpenAI    AIProvider = "openai"    // OpenAI Chat Completions, or any compatible server (Ollama, vLLM)
	ProviderOffline   AIProvider = "offline"   // the grounded offline responder; needs no key
)

// Bounds of the ai section.
const (
	MaxAITimeout   = 5 * time.Minute
	MaxAIMaxTokens = 32000
)

// AI is the ai section of site.yaml: how each node of AIRoster answers,
// and how the voice speaks. A node not listed answers offline. Keys are
// never written here: key_env names the environment variable that holds a
// key, and cmd reads it.
//
//	ai:
//	  timeout: 30s          # per provider call; default 30s, at most 5m
//	  max_tokens: 1024      # reply length bound; default 1024
//	  nodes:
//	    - designation: S1_PLEX
//	      provider: anthropic             # anthropic | openai | offline
//	      model: claude-sonnet-4-5
//	      key_env: ANTHROPIC_API_KEY
//	    - designation: S4_KIPP
//	      provider: openai                # any OpenAI-compatible server
//	      model: llama3.2
//	      base_url: http://127.0.0.1:11434/v1   # Ollama; no key_env: it needs none
//	      timeout: 60s
//	  voice:                              # optional; espeak-ng and lame by default
//	    provider: openai
//	    model: gpt-4o-mini-tts
//	    key_env: OPENAI_API_KEY
//	  judge:                              # optional; the evaluator's AI scan
//	    provider: anthropic               # anthropic | openai
//	    model: claude-haiku-4-5
//	    key_env: ANTHROPIC_API_KEY
//	    timeout: 5s                       # the evaluator's default
type AI struct {
	Timeout   Duration `yaml:"timeout" json:"timeout,omitempty"`
	MaxTokens int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
	Nodes     []AINode `yaml:"nodes" json:"nodes,omitempty"`
	Voice     AIVoice  `yaml:"voice" json:"voice,omitzero"`
	Judge     AIJudge  `yaml:"judge" json:"judge,omitzero"`
}

// AIJudge chooses the provider that judges texts in the AI-scan stage of
// the evaluation pipeline (POST /api/v1/evaluate, govern, certify): it
// must answer strict JSON within Timeout. Empty (no provider) means no
// judge: the offline, deterministic scan decides alone. It is used when
// its key is set.
type AIJudge struct {
	// Provider is anthropic or openai; empty for no judge.
	Provider AIProvider `yaml:"provider" json:"provider,omitempty"`
	Model    string     `yaml:"model" json:"model,omitempty"`
	BaseURL  string     `yaml:"base_url" json:"base_url,omitempty"`
	KeyEnv   string     `yaml:"key_env" json:"key_env,omitempty"`
	// Timeout bounds one judgement; 0 means the evaluator's default (5 s).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxTokens bounds the answer; 0 means DefaultJudgeMaxTokens.
	MaxTokens int `yaml:"max_tokens" json:"max_tokens,omitempty"`
}

// DefaultJudgeMaxTokens bounds a judge's answer (one small JSON object)
// when AIJudge.MaxTokens is 0.
const DefaultJudgeMaxTokens = 256

// AINode chooses one node's provider.
type AINode struct {
	// Designation names a node of AIRoster, e.g. S1_PLEX.
	Designation string `yaml:"designation" json:"designation"`
	// Provider is anthropic, openai or offline.
	Provider AIProvider `yaml:"provider" json:"provider"`
	// Model is required for anthropic and openai.
	Model string `yaml:"model" json:"model,omitempty"`
	// BaseURL is the API's address; empty means the provider's public
	// API. Required for an openai node without key_env (a local server).
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	// KeyEnv names the environment variable holding the key. Required for
	// anthropic; for openai it may be empty when BaseURL is a server that
	// needs no key.
	KeyEnv string `yaml:"key_env" json:"key_env,omitempty"`
	// System replaces the node's default instructions.
	System string `yaml:"system" json:"system,omitempty"`
	// Timeout replaces AI.Timeout for this node.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
}

// AIVoice chooses the voice's backend: empty (or provider espeak) is
// Debian's espeak-ng and lame; provider openai is OpenAI's text-to-speech
// (model and key_env required, base_url optional), used when its key is
// set.
type AIVoice struct {
	Provider string `yaml:"provider" json:"provider,omitempty"`
	Model    string `yaml:"model" json:"model,omitempty"`
	BaseURL  string `yaml:"base_url" json:"base_url,omitempty"`
	KeyEnv   string `yaml:"key_env" json:"key_env,omitempty"`
}

// Problem is a value of the charter that is wrong, at its YAML path (e.g.
// "$.ai.nodes[0].model"), so that the loader can name its line.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// The problems of key_env and base_url do not quote the value: it may be
// the very key (or a URL carrying one) that belongs in the environment.
const (
	keyEnvProblem  = "key_env must be the name of an environment variable (A-Z, 0-9, _), never a key: keys are read from the environment"
	baseURLProblem = "base_url must be an absolute http(s) URL without credentials"
)

// envNamePattern is an environment variable's name; validEnvName bounds its
// length (a bounded repetition, {0,127}, compiles to as many states at the
// start of every program).
var envNamePattern = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// validEnvName reports whether s is an environment variable's name of at
// most 128 bytes.
func validEnvName(s string) bool { return len(s) <= 128 && envNamePattern.MatchString(s) }

// Problems reports everything wrong with the ai section, each at its path.
func (a AI) Problems() []Problem {
	var out []Problem
	bad := func(path, format string, args ...any) {
		out = append(out, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if a.Timeout < 0 || time.Duration(a.Timeout) > MaxAITimeout {
		bad("$.ai.timeout", "timeout %s is outside 0..%s", a.Timeout, MaxAITimeout)
	}
	if a.MaxTokens < 0 || a.MaxTokens > MaxAIMaxTokens {
		bad("$.ai.max_tokens", "max_tokens %d is outside 0..%d", a.MaxTokens, MaxAIMaxTokens)
	}
	seen := map[string]bool{}
	for i, n := range a.Nodes {
		at := fmt.Sprintf("$.ai.nodes[%d]", i)
		if _, ok := AnsweringNodeOf(n.Designation); !ok {
			bad(at+".designation", "%q is not a node that answers (%s)", n.Designation, rosterNames())
		}
		if seen[n.Designation] {
			bad(at+".designation", "%s is listed twice", n.Designation)
		}
		seen[n.Designation] = true
		if !providerProblems(bad, at, "node", n.Provider, n.Model, n.KeyEnv, n.BaseURL, n.Timeout) {
			switch n.Provider {
			case ProviderOffline:
				if n.Model != "" || n.BaseURL != "" || n.KeyEnv != "" {
					bad(at+".provider", "an offline node takes no model, base_url or key_env")
				}
			default:
				bad(at+".provider", "provider %q is not anthropic, openai or offline", n.Provider)
			}
		}
	}
	a.Judge.problems(bad)
	switch v := a.Voice; v.Provider {
	case "", "espeak":
		if v.Model != "" || v.BaseURL != "" || v.KeyEnv != "" {
			bad("$.ai.voice.provider", "the espeak voice takes no model, base_url or key_env")
		}
	case "openai":
		if v.Model == "" || v.KeyEnv == "" {
			bad("$.ai.voice.provider", "an openai voice needs model and key_env")
		}
		if v.KeyEnv != "" && !validEnvName(v.KeyEnv) {
			bad("$.ai.voice.key_env", keyEnvProblem)
		}
		if v.BaseURL != "" && !validBaseURL(v.BaseURL) {
			bad("$.ai.voice.base_url", baseURLProblem)
		}
	default:
		bad("$.ai.voice.provider", "voice provider %q is not espeak or openai", v.Provider)
	}
	return out
}

// providerProblems checks what a node and the judge share (their
// timeout, key_env and base_url, and what an anthropic or openai provider
// needs), reporting each at its path under at. It reports whether p is
// anthropic or openai.
func providerProblems(bad func(path, format string, args ...any), at, what string, p AIProvider, model, keyEnv, baseURL string, timeout Duration) bool {
	if timeout < 0 || time.Duration(timeout) > MaxAITimeout {
		bad(at+".timeout", "timeout %s is outside 0..%s", timeout, MaxAITimeout)
	}
	if keyEnv != "" && !validEnvName(keyEnv) {
		bad(at+".key_env", keyEnvProblem)
	}
	if baseURL != "" && !validBaseURL(baseURL) {
		bad(at+".base_url", baseURLProblem)
	}
	switch p {
	case ProviderAnthropic:
		if model == "" || keyEnv == "" {
			bad(at+".provider", "an anthropic %s needs model and key_env", what)
		}
	case ProviderOpenAI:
		if model == "" || (keyEnv == "" && baseURL == "") {
			bad(at+".provider", "an openai %s needs model, and key_env or base_url", what)
		}
	default:
		return false
	}
	return true
}

// problems reports everything wrong with the judge, at $.ai.judge.
func (j AIJudge) problems(bad func(path, format string, args ...any)) {
	const at = "$.ai.judge"
	if j.Provider == "" {
		if j != (AIJudge{}) {
			bad(at+".provider", "a judge needs a provider: anthropic or openai (leave the judge out for none)")
		}
		return
	}
	if !providerProblems(bad, at, "judge", j.Provider, j.Model, j.KeyEnv, j.BaseURL, j.Timeout) {
		bad(at+".provider", "judge provider %q is not anthropic or openai (the offline scan needs no judge: leave the judge out)", j.Provider)
	}
	if j.MaxTokens < 0 || j.MaxTokens > MaxAIMaxTokens {
		bad(at+".max_tokens", "max_tokens %d is outside 0..%d", j.MaxTokens, MaxAIMaxTokens)
	}
}

func rosterNames() string {
	names := make([]string, len(AIRoster))
	for i, n := range AIRoster {
		names[i] = n.Designation
	}
	return strings.Join(names, ", ")
}

func validBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// KeyEnvs returns the environment variable names the section reads keys
// from (nodes, voice and judge), sorted and without repeats: cmd looks
// these up.
func (a AI) KeyEnvs() []string {
	names := []string{a.Voice.KeyEnv, a.Judge.KeyEnv}
	for _, n := range a.Nodes {
		names = append(names, n.KeyEnv)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if names[0] == "" {
		names = names[1:]
	}
	return names
}
