package ai

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Role is what a node does on the public surface.
type Role string

// The node roles.
const (
	RoleChat    Role = "chat"    // answers /api/chat and weighs in on /api/pulse
	RoleAirlock Role = "airlock" // the public airlock: /api/ember, /api/lumen, /api/v1/query
)

// Roster is the fixed set of nodes the public API names (spec 4.4, 4.5):
// five chat nodes and the two airlock nodes, with the names
// /api/v1/query accepts. Configuration chooses their providers; it cannot
// add or remove nodes.
var Roster = []RosterNode{
	{Designation: "S1_PLEX", Role: RoleChat},
	{Designation: "S2_CASE", Role: RoleChat},
	{Designation: "S3_TARS", Role: RoleChat},
	{Designation: "S4_KIPP", Role: RoleChat},
	{Designation: "S6_FORGE", Role: RoleChat},
	{Designation: "S5_LOCUS", Name: "Ember", Role: RoleAirlock},
	{Designation: "S17_LUMEN", Name: "Lumen", Role: RoleAirlock},
}

// RosterNode is one node of the Roster.
type RosterNode struct {
	Designation string
	Name        string // the name /api/v1/query accepts (airlock nodes)
	Role        Role
}

// Defaults of Config.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxTokens = 1024
	maxTimeout       = 5 * time.Minute
	maxMaxTokens     = 32000
)

// Config is the "ai" section of site.yaml: how each node answers. A node
// not listed answers offline. Keys are never written here: KeyEnv names the
// environment variable that holds a node's key, and cmd reads it.
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
type Config struct {
	Timeout   time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	MaxTokens int           `yaml:"max_tokens" json:"max_tokens,omitempty"`
	Nodes     []NodeConfig  `yaml:"nodes" json:"nodes,omitempty"`
}

// NodeConfig chooses one node's provider.
type NodeConfig struct {
	// Designation names a node of the Roster, e.g. S1_PLEX.
	Designation string `yaml:"designation" json:"designation"`
	// Provider is anthropic, openai or offline.
	Provider Kind `yaml:"provider" json:"provider"`
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
	// Timeout replaces Config.Timeout for this node.
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
}

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,127}$`)

// rosterNode returns the Roster entry of a designation.
func rosterNode(designation string) (RosterNode, bool) {
	i := slices.IndexFunc(Roster, func(r RosterNode) bool { return r.Designation == designation })
	if i < 0 {
		return RosterNode{}, false
	}
	return Roster[i], true
}

// Validate reports every problem of the configuration, each naming its
// node, joined in one error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if c.Timeout < 0 || c.Timeout > maxTimeout {
		bad("timeout %s is outside 0..%s", c.Timeout, maxTimeout)
	}
	if c.MaxTokens < 0 || c.MaxTokens > maxMaxTokens {
		bad("max_tokens %d is outside 0..%d", c.MaxTokens, maxMaxTokens)
	}
	seen := map[string]bool{}
	for i, n := range c.Nodes {
		at := fmt.Sprintf("nodes[%d] (%s)", i, n.Designation)
		if _, ok := rosterNode(n.Designation); !ok {
			bad("%s: not a node of the roster", at)
		}
		if seen[n.Designation] {
			bad("%s: listed twice", at)
		}
		seen[n.Designation] = true
		if n.Timeout < 0 || n.Timeout > maxTimeout {
			bad("%s: timeout %s is outside 0..%s", at, n.Timeout, maxTimeout)
		}
		if n.KeyEnv != "" && !envName.MatchString(n.KeyEnv) {
			bad("%s: key_env %q is not an environment variable name", at, n.KeyEnv)
		}
		if n.BaseURL != "" {
			if err := checkBaseURL(n.BaseURL); err != nil {
				bad("%s: %v", at, err)
			}
		}
		switch n.Provider {
		case KindOffline:
			if n.Model != "" || n.BaseURL != "" || n.KeyEnv != "" {
				bad("%s: an offline node takes no model, base_url or key_env", at)
			}
		case KindAnthropic:
			if n.Model == "" || n.KeyEnv == "" {
				bad("%s: an anthropic node needs model and key_env", at)
			}
		case KindOpenAI:
			if n.Model == "" || (n.KeyEnv == "" && n.BaseURL == "") {
				bad("%s: an openai node needs model, and key_env or base_url", at)
			}
		default:
			bad("%s: provider %q is not anthropic, openai or offline", at, n.Provider)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// KeyEnvs returns the environment variable names the configuration reads
// keys from, sorted and without repeats: cmd looks these up and passes
// the values in Options.Keys.
func (c Config) KeyEnvs() []string {
	var names []string
	for _, n := range c.Nodes {
		if n.KeyEnv != "" && !slices.Contains(names, n.KeyEnv) {
			names = append(names, n.KeyEnv)
		}
	}
	slices.Sort(names)
	return names
}
