// Package charter is the organisation's published charter: the one
// definition of what content/site.yaml declares (the site's identity, the
// organisation, the node roster and towns, the capability board, the publish
// rule, the gate policy, the documented ledger seams, the stewardship
// horizon, the constitution's metadata, and the runtime defaults this
// instance publishes with them).
//
// It holds values only: site/content decodes site.yaml into a Charter and
// validates it, naming the file and line of every problem; the live edge
// answers with these same types (their json tags are the wire format); the
// gate and the chain read the policy and the seams from them. The package
// does no I/O.
//
//	c, err := content.LoadCharter(os.DirFS("content")) // decode and validate
//	board := c.Board()                                 // capability key -> value
//	seams := c.Ledger.Seams()                          // for the verifier
package charter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/proofsite/proofsite/ledger"
)

// Charter is site.yaml: the site's identity and the data it publishes.
type Charter struct {
	SiteInfo     `yaml:"site" json:"site"` // its fields (Title, BaseURL, ...) read as the charter's own
	Organisation Organisation              `yaml:"organisation" json:"organisation"`
	Nodes        []Node                    `yaml:"nodes" json:"nodes"`
	Towns        []Town                    `yaml:"towns" json:"towns"`
	Capabilities []Capability              `yaml:"capabilities" json:"capabilities"`
	PublishRule  PublishRule               `yaml:"publish_rule" json:"publish_rule"`
	Ledger       Ledger                    `yaml:"ledger" json:"ledger"`
	Stewardship  Stewardship               `yaml:"stewardship" json:"stewardship"`
	Constitution Constitution              `yaml:"constitution" json:"constitution"`
	Gate         Gate                      `yaml:"gate" json:"gate"`
	Runtime      Runtime                   `yaml:"runtime" json:"runtime"`
}

// SiteInfo names the site and where it lives.
type SiteInfo struct {
	Title       string `yaml:"title" json:"title"`
	Summary     string `yaml:"summary" json:"summary"` // one sentence, used in llms.txt and meta tags
	BaseURL     string `yaml:"base_url" json:"base_url"`
	APIURL      string `yaml:"api_url" json:"api_url"` // origin of the verification API (/api/v1, /api/chain/latest)
	Language    string `yaml:"language" json:"language,omitempty"`
	License     string `yaml:"license" json:"license"`
	Description string `yaml:"description" json:"description,omitempty"` // a paragraph for the home page
}

// Organisation is who publishes the ledger.
type Organisation struct {
	Name           string `yaml:"name" json:"name"`
	LegalName      string `yaml:"legal_name" json:"legal_name,omitempty"`
	Jurisdiction   string `yaml:"jurisdiction" json:"jurisdiction,omitempty"`
	Contact        string `yaml:"contact" json:"contact,omitempty"`
	HumanAuthority string `yaml:"human_authority" json:"human_authority"` // the human authorization boundary, in one paragraph
}

// Node is one member of the collective roster: an AI node or the human Bridge.
type Node struct {
	ID          string `yaml:"id" json:"id,omitempty" doc:"Federation id (s1..s7, bridge); empty for roster-only nodes"`
	Designation string `yaml:"designation" json:"designation"`
	Name        string `yaml:"name" json:"name"`
	Kind        string `yaml:"kind" json:"kind" enum:"ai,human"`
	Role        string `yaml:"role" json:"role,omitempty"`
	Provider    string `yaml:"provider" json:"provider,omitempty"` // AI provider behind the node; empty for humans
	Platform    string `yaml:"platform" json:"platform,omitempty"`
	Station     string `yaml:"station" json:"station,omitempty"`
	TrustLevel  string `yaml:"trust_level" json:"trust_level,omitempty"`
	Town        string `yaml:"town" json:"town,omitempty"`                 // id of the node's town, if any (live only where its route answers)
	PublicRoute string `yaml:"public_route" json:"public_route,omitempty"` // public airlock route, if any (e.g. /api/ember), published only while it answers
	// RoadmapRoute is PublicRoute as published by a server that does not
	// answer it yet (Served); never read from site.yaml.
	RoadmapRoute string `yaml:"-" json:"roadmap_route,omitempty"`
}

// MemoryID is the node's id in memory (/api/memory/retrieve/{node_id}):
// its name in lower case, for AI nodes; empty for the human.
func (n Node) MemoryID() string {
	if n.Kind != "ai" {
		return ""
	}
	return strings.ToLower(n.Name)
}

// Served returns n as a server publishes it, given which routes answer
// there: the public route stays only if it answers; otherwise it is
// RoadmapRoute, announced, not claimed.
func (n Node) Served(answers func(path string) bool) Node {
	if n.PublicRoute != "" && !answers(n.PublicRoute) {
		n.RoadmapRoute, n.PublicRoute = n.PublicRoute, ""
	}
	return n
}

// TownPath is the route of a town on the API origin.
func TownPath(id string) string { return "/api/v1/towns/" + id }

// Town is a digital town: a persistent space of one node.
type Town struct {
	ID          string `yaml:"id" json:"id"`
	Node        string `yaml:"node" json:"node"` // designation of the node that lives there
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
}

// Capability is one row of the published capability maturity board.
type Capability struct {
	Key   string `yaml:"key" json:"key"`
	Value string `yaml:"value" json:"value"`
	Note  string `yaml:"note" json:"note,omitempty"`
}

// Roadmap reports whether the capability is announced rather than live.
func (c Capability) Roadmap() bool { return c.Value == "roadmap" }

// CapabilityKeys are the rows of the maturity board, in published order.
var CapabilityKeys = []string{
	"maturity", "bridge_auth", "node_approval_quorum",
	"dissent_channel", "runtime_enforcement", "enforcement_model",
}

// PublishRule is the rule that gates public claims behind Bridge
// authorization (ledger/gate enforces it).
type PublishRule struct {
	Key        string `yaml:"key" json:"key"`
	Action     string `yaml:"action" json:"action"`
	Requires   string `yaml:"requires" json:"requires"`
	Text       string `yaml:"text" json:"text"`
	Disclaimer string `yaml:"disclaimer" json:"disclaimer,omitempty"`
}

// Gate is the gate's policy, as published: the controls each action class
// requires, the actions denied unconditionally, the pinned Bridge public
// keys, and the content files whose text is a public claim under the
// publish rule.
type Gate struct {
	Actions    []GateAction `yaml:"actions" json:"actions"`
	Denied     []string     `yaml:"denied" json:"denied"`
	BridgeKeys []BridgeKey  `yaml:"bridge_keys" json:"bridge_keys"`
	ClaimFiles []string     `yaml:"claim_files" json:"claim_files"` // content paths, e.g. products/gate/README.md
}

// Published returns the Bridge keys as published keys of role bridge,
// checking each.
func (g Gate) Published() ([]ledger.PublishedKey, error) {
	out := make([]ledger.PublishedKey, 0, len(g.BridgeKeys))
	for _, k := range g.BridgeKeys {
		pub, err := ledger.ParsePublicKeyHex(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("charter: gate.bridge_keys %s: %w", k.KeyID, err)
		}
		out = append(out, ledger.Publish(pub, ledger.RoleBridge))
	}
	return out, nil
}

// GateAction is one row of the gate's action table.
type GateAction struct {
	Action   string   `yaml:"action" json:"action"`     // an action class, e.g. PUBLIC_CLAIM_CHANGE
	Requires []string `yaml:"requires" json:"requires"` // controls, all required, e.g. [BRIDGE_AUTH]
}

// BridgeKey is a pinned Bridge public key. The private half never appears
// in content: the Bridge keeps it offline.
type BridgeKey struct {
	KeyID     string `yaml:"key_id" json:"key_id"`
	PublicKey string `yaml:"public_key" json:"public_key"` // 32 bytes, hex
	Note      string `yaml:"note" json:"note,omitempty"`
}

// Ledger is what the site publishes about the ledger.
type Ledger struct {
	DocumentedSeams []Seam `yaml:"documented_seams" json:"documented_seams"`
	// WitnessQuorum is the number of distinct pinned witness signatures
	// every block needs; 0 means ledger.DefaultWitnessQuorum (Quorum).
	WitnessQuorum int `yaml:"witness_quorum" json:"witness_quorum,omitempty"`
}

// Quorum returns the witness quorum, ledger.DefaultWitnessQuorum unless
// site.yaml sets one.
func (l Ledger) Quorum() int {
	if l.WitnessQuorum > 0 {
		return l.WitnessQuorum
	}
	return ledger.DefaultWitnessQuorum
}

// Seam is a documented break of the strict table, with its public reason.
type Seam struct {
	Block      int    `yaml:"block" json:"block"`
	Reason     string `yaml:"reason" json:"reason"`
	Documented Date   `yaml:"documented" json:"documented"`
}

// Seams returns the documented seams in the verifier's terms.
func (l Ledger) Seams() []ledger.Seam {
	seams := make([]ledger.Seam, len(l.DocumentedSeams))
	for i, s := range l.DocumentedSeams {
		seams[i] = ledger.Seam{Block: int64(s.Block), Reason: s.Reason}
	}
	return seams
}

// Documented returns the seam documented for block, if any.
func (l Ledger) Documented(block int) (Seam, bool) {
	for _, s := range l.DocumentedSeams {
		if s.Block == block {
			return s, true
		}
	}
	return Seam{}, false
}

// Stewardship is the readiness map of the closure layers.
type Stewardship struct {
	Summary string  `yaml:"summary" json:"summary"`
	Layers  []Layer `yaml:"layers" json:"layers"`
}

// Layer is one closure layer of the stewardship horizon.
type Layer struct {
	Key       string   `yaml:"key" json:"key"`
	Name      string   `yaml:"name" json:"name"`
	Readiness string   `yaml:"readiness" json:"readiness"` // live, partial or roadmap
	Summary   string   `yaml:"summary" json:"summary,omitempty"`
	Evidence  []string `yaml:"evidence" json:"evidence,omitempty"` // site paths that show the layer at work
}

// Constitution describes the constitution texts and discloses the article
// counts of every surface that shows one.
type Constitution struct {
	Title           string         `yaml:"title" json:"title"`
	Version         string         `yaml:"version" json:"version"`
	Status          string         `yaml:"status" json:"status"`
	Adopted         Date           `yaml:"adopted" json:"adopted"`
	License         string         `yaml:"license" json:"license"`
	RuntimeArtifact string         `yaml:"runtime_artifact" json:"runtime_artifact"` // content path of the runtime JSON
	Surfaces        []CountSurface `yaml:"surfaces" json:"surfaces"`
}

// CountSurface is one place that states an article count.
type CountSurface struct {
	Name     string `yaml:"name" json:"name"`
	Articles int    `yaml:"articles" json:"articles"`
	// Source says how the count is checked: "published" and "runtime" are
	// compared with the loaded texts at build time; "declared" is disclosed as
	// stated because the surface is not part of this content.
	Source string `yaml:"source" json:"source"`
	Note   string `yaml:"note" json:"note,omitempty"`
}

// Runtime holds defaults of this instance's operation that the organisation
// publishes with its charter. Each is optional; a command-line flag or a
// PROOFSITE_* variable overrides it, and an empty value means the built-in
// default.
type Runtime struct {
	// WalkEvery is how often serve re-verifies the whole chain, e.g. "10m".
	WalkEvery Duration `yaml:"walk_every" json:"walk_every,omitempty"`
	// PostLimit is the per-client rate of POST routes without a limit of
	// their own, N/DURATION (e.g. "30/1m").
	PostLimit string `yaml:"post_limit" json:"post_limit,omitempty"`
	// Witnesses is how many witness keys "ledger init" generates; every block
	// it seals carries a signature of each.
	Witnesses int `yaml:"witnesses" json:"witnesses,omitempty"`
}

// Board returns the capability board as a map of key to value, the shape
// of the OpenAPI extension and the discovery documents.
func (c *Charter) Board() map[string]string {
	m := make(map[string]string, len(c.Capabilities))
	for _, cp := range c.Capabilities {
		m[cp.Key] = cp.Value
	}
	return m
}

// Node returns the node with federation id id.
func (c *Charter) Node(id string) (Node, bool) {
	for _, n := range c.Nodes {
		if n.ID != "" && n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Capability returns the board row of key.
func (c *Charter) Capability(key string) (Capability, bool) {
	for _, cp := range c.Capabilities {
		if cp.Key == key {
			return cp, true
		}
	}
	return Capability{}, false
}

// Date is a calendar day written as YYYY-MM-DD.
type Date struct{ time.Time }

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("expected a date (YYYY-MM-DD), found %q", s)
	}
	return Date{t}, nil
}

// UnmarshalYAML accepts exactly YYYY-MM-DD and names the offending token
// otherwise, so a decoding error points at its line.
func (d *Date) UnmarshalYAML(node ast.Node) error {
	parsed, err := ParseDate(strings.Trim(strings.TrimSpace(node.String()), `"'`))
	if err != nil {
		return &yaml.SyntaxError{Message: err.Error(), Token: node.GetToken()}
	}
	*d = parsed
	return nil
}

// String formats the day as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Format(time.DateOnly)
}

// MarshalText formats the day as YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// MarshalJSON writes the day as a JSON string, "" for the zero Date (the
// embedded time.Time would write an instant).
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a JSON string as UnmarshalText does.
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected a date (YYYY-MM-DD): %w", err)
	}
	return d.UnmarshalText([]byte(s))
}

// UnmarshalText reads YYYY-MM-DD; the empty text is the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	parsed, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// Duration is a length of time written as Go writes it: "90s", "10m", "1h30m".
type Duration time.Duration

// UnmarshalYAML reads a duration and names the offending token otherwise.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	s := strings.Trim(strings.TrimSpace(node.String()), `"'`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return &yaml.SyntaxError{Message: fmt.Sprintf("expected a duration such as 10m, found %q", s), Token: node.GetToken()}
	}
	*d = Duration(v)
	return nil
}

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText formats the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Rate is at most Max requests per Window.
type Rate struct {
	Max    int
	Window time.Duration
}

// ParseRate reads a rate written N/DURATION, e.g. "30/1m".
func ParseRate(s string) (Rate, error) {
	n, d, ok := strings.Cut(s, "/")
	max, err := strconv.Atoi(n)
	if !ok || err != nil || max <= 0 {
		return Rate{}, fmt.Errorf("rate %q: want N/DURATION, e.g. 30/1m", s)
	}
	window, err := time.ParseDuration(d)
	if err != nil || window <= 0 {
		return Rate{}, fmt.Errorf("rate %q: want N/DURATION, e.g. 30/1m", s)
	}
	return Rate{Max: max, Window: window}, nil
}
