package ai

import (
	"errors"
	"fmt"
	"time"

	"github.com/proofsite/proofsite/ledger/charter"
)

// The node roster and the configuration are the charter's (site.yaml's ai
// section, validated with file and line when the content is loaded); these
// names are this package's view of them.
type (
	// Role is what a node does on the public surface.
	Role = charter.AIRole
	// RosterNode is one node of the Roster.
	RosterNode = charter.AnsweringNode
	// Config is the ai section of site.yaml: how each node answers.
	Config = charter.AI
	// NodeConfig chooses one node's provider.
	NodeConfig = charter.AINode
	// Kind names a provider implementation.
	Kind = charter.AIProvider
)

// The node roles.
const (
	RoleChat    = charter.AIRoleChat    // answers /api/chat and weighs in on /api/pulse
	RoleAirlock = charter.AIRoleAirlock // the public airlock: /api/ember, /api/lumen, /api/v1/query
)

// The provider kinds a node can be configured with.
const (
	KindAnthropic = charter.ProviderAnthropic // Anthropic Messages API
	KindOpenAI    = charter.ProviderOpenAI    // OpenAI Chat Completions, or any compatible server (Ollama, vLLM)
	KindOffline   = charter.ProviderOffline   // the grounded offline responder; needs no key
)

// Roster is the fixed set of nodes the public API names (spec 4.4, 4.5):
// five chat nodes and the two airlock nodes. Configuration chooses their
// providers; it cannot add or remove nodes.
var Roster = charter.AIRoster

// Defaults of Config.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxTokens = 1024
)

// validate reports every problem of the configuration (charter.AI.Problems),
// joined in one error wrapping ErrInvalidConfig.
func validate(c Config) error {
	var errs []error
	for _, p := range c.Problems() {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, p))
	}
	return errors.Join(errs...)
}
