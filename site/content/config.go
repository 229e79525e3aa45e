package content

import (
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/gate"
)

// ConfigFile is the name of the site configuration inside a content directory.
const ConfigFile = "site.yaml"

// Config is site.yaml: the site's identity and the data it publishes.
type Config struct {
	Site         SiteInfo         `yaml:"site"`
	Organisation Organisation     `yaml:"organisation"`
	Nodes        []Node           `yaml:"nodes"`
	Towns        []Town           `yaml:"towns"`
	Capabilities []Capability     `yaml:"capabilities"`
	PublishRule  PublishRule      `yaml:"publish_rule"`
	Ledger       LedgerConfig     `yaml:"ledger"`
	Stewardship  Stewardship      `yaml:"stewardship"`
	Constitution ConstitutionMeta `yaml:"constitution"`
	Gate         GateConfig       `yaml:"gate"`
}

// SiteInfo names the site and where it lives.
type SiteInfo struct {
	Title       string `yaml:"title"`
	Summary     string `yaml:"summary"` // one sentence, used in llms.txt and meta tags
	BaseURL     string `yaml:"base_url"`
	APIURL      string `yaml:"api_url"` // origin of the verification API (/api/v1, /api/chain/latest)
	Language    string `yaml:"language"`
	License     string `yaml:"license"`
	Description string `yaml:"description"` // a paragraph for the home page
}

// Organisation is who publishes the ledger.
type Organisation struct {
	Name           string `yaml:"name"`
	LegalName      string `yaml:"legal_name"`
	Jurisdiction   string `yaml:"jurisdiction"`
	Contact        string `yaml:"contact"`
	HumanAuthority string `yaml:"human_authority"` // the human authorization boundary, in one paragraph
}

// Node is one member of the collective roster: an AI node or the human Bridge.
type Node struct {
	ID          string `yaml:"id"` // federation id (s1..s7, bridge); empty for roster-only nodes
	Designation string `yaml:"designation"`
	Name        string `yaml:"name"`
	Kind        string `yaml:"kind"` // "ai" or "human"
	Role        string `yaml:"role"`
	Provider    string `yaml:"provider"` // AI provider behind the node; empty for humans
	Platform    string `yaml:"platform"`
	Station     string `yaml:"station"`
	TrustLevel  string `yaml:"trust_level"`
	Town        string `yaml:"town"`         // id of the node's live town, if any
	PublicRoute string `yaml:"public_route"` // public airlock route, if any (e.g. /api/ember)
}

// Town is a digital town: a persistent space of one node.
type Town struct {
	ID          string `yaml:"id"`
	Node        string `yaml:"node"` // designation of the node that lives there
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Capability is one row of the published capability maturity board.
type Capability struct {
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
	Note  string `yaml:"note"`
}

// Roadmap reports whether the capability is announced rather than live.
func (c Capability) Roadmap() bool { return c.Value == "roadmap" }

// PublishRule is the rule that gates public claims behind Bridge authorization.
type PublishRule struct {
	Key        string `yaml:"key"`
	Action     string `yaml:"action"`
	Requires   string `yaml:"requires"`
	Text       string `yaml:"text"`
	Disclaimer string `yaml:"disclaimer"`
}

// GateConfig is the gate's policy, as published: the controls each action
// class requires, the actions denied unconditionally, the pinned Bridge
// public keys, and the content files whose text is a public claim under the
// publish rule.
type GateConfig struct {
	Actions    []GateAction `yaml:"actions"`
	Denied     []string     `yaml:"denied"`
	BridgeKeys []BridgeKey  `yaml:"bridge_keys"`
	ClaimFiles []string     `yaml:"claim_files"` // content paths, e.g. products/gate/README.md
}

// GateAction is one row of the gate's action table.
type GateAction struct {
	Action   string   `yaml:"action"`   // an action class, e.g. PUBLIC_CLAIM_CHANGE
	Requires []string `yaml:"requires"` // controls, all required, e.g. [BRIDGE_AUTH]
}

// BridgeKey is a pinned Bridge public key. The private half never appears
// in content: the Bridge keeps it offline.
type BridgeKey struct {
	KeyID     string `yaml:"key_id"`
	PublicKey string `yaml:"public_key"` // 32 bytes, hex
	Note      string `yaml:"note"`
}

// LedgerConfig is what the site publishes about the ledger.
type LedgerConfig struct {
	DocumentedSeams []Seam `yaml:"documented_seams"`
}

// Seam is a documented break of the strict table, with its public reason.
type Seam struct {
	Block      int    `yaml:"block"`
	Reason     string `yaml:"reason"`
	Documented Date   `yaml:"documented"`
}

// Stewardship is the readiness map of the closure layers.
type Stewardship struct {
	Summary string         `yaml:"summary"`
	Layers  []ClosureLayer `yaml:"layers"`
}

// ClosureLayer is one layer of the stewardship horizon.
type ClosureLayer struct {
	Key       string   `yaml:"key"`
	Name      string   `yaml:"name"`
	Readiness string   `yaml:"readiness"` // live, partial or roadmap
	Summary   string   `yaml:"summary"`
	Evidence  []string `yaml:"evidence"` // site paths that show the layer at work
}

// ConstitutionMeta describes the constitution texts and discloses the article
// counts of every surface that shows one.
type ConstitutionMeta struct {
	Title           string         `yaml:"title"`
	Version         string         `yaml:"version"`
	Status          string         `yaml:"status"`
	Adopted         Date           `yaml:"adopted"`
	License         string         `yaml:"license"`
	RuntimeArtifact string         `yaml:"runtime_artifact"` // content path of the runtime JSON
	Surfaces        []CountSurface `yaml:"surfaces"`
}

// CountSurface is one place that states an article count.
type CountSurface struct {
	Name     string `yaml:"name"`
	Articles int    `yaml:"articles"`
	// Source says how the count is checked: "published" and "runtime" are
	// compared with the loaded texts at build time; "declared" is disclosed as
	// stated because the surface is not part of this content.
	Source string `yaml:"source"`
	Note   string `yaml:"note"`
}

// Date is a calendar day written as YYYY-MM-DD.
type Date struct{ time.Time }

// UnmarshalYAML accepts exactly YYYY-MM-DD.
func (d *Date) UnmarshalYAML(node ast.Node) error {
	s := strings.Trim(strings.TrimSpace(node.String()), `"'`)
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return &yaml.SyntaxError{Message: fmt.Sprintf("expected a date (YYYY-MM-DD), found %q", s), Token: node.GetToken()}
	}
	d.Time = t
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

// CapabilityKeys are the rows of the maturity board, in published order.
var CapabilityKeys = []string{
	"maturity", "bridge_auth", "node_approval_quorum",
	"dissent_channel", "runtime_enforcement", "enforcement_model",
}

var (
	idPattern          = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	designationPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	readinessValues    = []string{"live", "partial", "roadmap"}
	countSources       = []string{"published", "runtime", "declared"}
)

// parseConfig decodes and validates site.yaml.
func parseConfig(src []byte) (*Config, *yamlDoc, []*Error) {
	var cfg Config
	doc, yerr := decodeYAML(ConfigFile, src, 0, &cfg)
	if yerr != nil {
		return nil, nil, []*Error{yerr}
	}
	return &cfg, doc, cfg.validate(doc)
}

// validate checks everything site.yaml can get wrong on its own.
func (c *Config) validate(doc *yamlDoc) []*Error {
	var errs []*Error
	need := func(path, value string) {
		if strings.TrimSpace(value) == "" {
			errs = append(errs, doc.errorf(path, "%s is required", path[2:]))
		}
	}
	absURL := func(path, value string) {
		need(path, value)
		if value == "" {
			return
		}
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs = append(errs, doc.errorf(path, "%s must be an absolute http(s) origin such as https://example.org, found %q", path[2:], value))
		}
	}

	need("$.site.title", c.Site.Title)
	need("$.site.summary", c.Site.Summary)
	absURL("$.site.base_url", c.Site.BaseURL)
	absURL("$.site.api_url", c.Site.APIURL)
	need("$.organisation.name", c.Organisation.Name)

	ids, designations := map[string]bool{}, map[string]bool{}
	for i, n := range c.Nodes {
		p := fmt.Sprintf("$.nodes[%d]", i)
		need(p+".designation", n.Designation)
		need(p+".name", n.Name)
		if n.Designation != "" && !designationPattern.MatchString(n.Designation) {
			errs = append(errs, doc.errorf(p+".designation", "designation %q must be upper case letters, digits and _", n.Designation))
		}
		if designations[n.Designation] {
			errs = append(errs, doc.errorf(p+".designation", "duplicate node designation %q", n.Designation))
		}
		designations[n.Designation] = true
		if n.ID != "" {
			if !idPattern.MatchString(n.ID) {
				errs = append(errs, doc.errorf(p+".id", "node id %q must be lower case letters, digits and -", n.ID))
			}
			if ids[n.ID] {
				errs = append(errs, doc.errorf(p+".id", "duplicate node id %q", n.ID))
			}
			ids[n.ID] = true
		}
		if n.Kind != "ai" && n.Kind != "human" {
			errs = append(errs, doc.errorf(p+".kind", "node kind must be \"ai\" or \"human\", found %q", n.Kind))
		}
	}
	if len(c.Nodes) == 0 {
		errs = append(errs, doc.errorf("$.nodes", "nodes: at least one node is required"))
	}

	towns := map[string]bool{}
	for i, t := range c.Towns {
		p := fmt.Sprintf("$.towns[%d]", i)
		need(p+".id", t.ID)
		need(p+".name", t.Name)
		if towns[t.ID] {
			errs = append(errs, doc.errorf(p+".id", "duplicate town id %q", t.ID))
		}
		towns[t.ID] = true
		if !designations[t.Node] {
			errs = append(errs, doc.errorf(p+".node", "town %q names node %q, which is not in nodes", t.ID, t.Node))
		}
	}
	for i, n := range c.Nodes {
		if n.Town != "" && !towns[n.Town] {
			errs = append(errs, doc.errorf(fmt.Sprintf("$.nodes[%d].town", i), "node %s names town %q, which is not in towns", n.Designation, n.Town))
		}
	}

	seen := map[string]bool{}
	for i, cp := range c.Capabilities {
		p := fmt.Sprintf("$.capabilities[%d]", i)
		switch {
		case !slices.Contains(CapabilityKeys, cp.Key):
			errs = append(errs, doc.errorf(p+".key", "unknown capability %q (known: %s)", cp.Key, strings.Join(CapabilityKeys, ", ")))
		case seen[cp.Key]:
			errs = append(errs, doc.errorf(p+".key", "capability %q is listed twice", cp.Key))
		}
		seen[cp.Key] = true
		need(p+".value", cp.Value)
	}
	for _, k := range CapabilityKeys {
		if !seen[k] {
			errs = append(errs, doc.errorf("$.capabilities", "capability board is missing %q", k))
		}
	}

	need("$.publish_rule.key", c.PublishRule.Key)
	need("$.publish_rule.action", c.PublishRule.Action)
	need("$.publish_rule.requires", c.PublishRule.Requires)
	need("$.publish_rule.text", c.PublishRule.Text)

	blocks := map[int]bool{}
	for i, s := range c.Ledger.DocumentedSeams {
		p := fmt.Sprintf("$.ledger.documented_seams[%d]", i)
		if s.Block <= 0 {
			errs = append(errs, doc.errorf(p+".block", "a documented seam needs a block index above 0"))
		}
		if blocks[s.Block] {
			errs = append(errs, doc.errorf(p+".block", "block %d is documented twice", s.Block))
		}
		blocks[s.Block] = true
		need(p+".reason", s.Reason)
	}

	for i, l := range c.Stewardship.Layers {
		p := fmt.Sprintf("$.stewardship.layers[%d]", i)
		need(p+".key", l.Key)
		need(p+".name", l.Name)
		if !slices.Contains(readinessValues, l.Readiness) {
			errs = append(errs, doc.errorf(p+".readiness", "readiness must be one of %s, found %q", strings.Join(readinessValues, ", "), l.Readiness))
		}
	}

	errs = append(errs, c.validateGate(doc)...)

	need("$.constitution.title", c.Constitution.Title)
	need("$.constitution.version", c.Constitution.Version)
	need("$.constitution.status", c.Constitution.Status)
	need("$.constitution.runtime_artifact", c.Constitution.RuntimeArtifact)
	for i, s := range c.Constitution.Surfaces {
		p := fmt.Sprintf("$.constitution.surfaces[%d]", i)
		need(p+".name", s.Name)
		if !slices.Contains(countSources, s.Source) {
			errs = append(errs, doc.errorf(p+".source", "source must be one of %s, found %q", strings.Join(countSources, ", "), s.Source))
		}
	}
	return errs
}

// validateGate checks the gate section and that the publish rule names an
// action of it. The gate package checks the same policy again when cmd
// builds it; these checks exist to name the line.
func (c *Config) validateGate(doc *yamlDoc) []*Error {
	var errs []*Error
	g := c.Gate
	denied := map[string]bool{}
	for i, a := range g.Denied {
		p := fmt.Sprintf("$.gate.denied[%d]", i)
		switch {
		case !gate.ValidAction(a):
			errs = append(errs, doc.errorf(p, "action %q must be upper case letters, digits and _", a))
		case denied[a]:
			errs = append(errs, doc.errorf(p, "action %s is denied twice", a))
		}
		denied[a] = true
	}
	if !denied[string(gate.HardDelete)] {
		errs = append(errs, doc.errorf("$.gate.denied", "gate.denied must list %s: it is denied unconditionally", gate.HardDelete))
	}
	actions := map[string][]string{}
	for i, a := range g.Actions {
		p := fmt.Sprintf("$.gate.actions[%d]", i)
		switch {
		case !gate.ValidAction(a.Action):
			errs = append(errs, doc.errorf(p+".action", "action %q must be upper case letters, digits and _", a.Action))
		case a.Action == string(gate.HardDelete) || denied[a.Action]:
			errs = append(errs, doc.errorf(p+".action", "%s is denied unconditionally; it cannot require controls", a.Action))
		case actions[a.Action] != nil:
			errs = append(errs, doc.errorf(p+".action", "action %s is listed twice", a.Action))
		}
		if len(a.Requires) == 0 {
			errs = append(errs, doc.errorf(p, "action %s requires no control, which would allow it unconditionally; name a control or deny it", a.Action))
		}
		seen := map[string]bool{}
		for j, ctl := range a.Requires {
			if !gate.KnownControl(gate.Control(ctl)) {
				var known []string
				for _, ci := range gate.Controls() {
					known = append(known, string(ci.Control))
				}
				errs = append(errs, doc.errorf(fmt.Sprintf("%s.requires[%d]", p, j), "unknown control %q (known: %s)", ctl, strings.Join(known, ", ")))
			}
			if seen[ctl] {
				errs = append(errs, doc.errorf(fmt.Sprintf("%s.requires[%d]", p, j), "control %s is required twice", ctl))
			}
			seen[ctl] = true
		}
		actions[a.Action] = append([]string{}, a.Requires...)
	}
	if req, ok := actions[c.PublishRule.Action]; c.PublishRule.Action != "" && (!ok || !slices.Contains(req, c.PublishRule.Requires)) {
		errs = append(errs, doc.errorf("$.publish_rule.action", "the publish rule's %s must be a gate action that requires %s", c.PublishRule.Action, c.PublishRule.Requires))
	}

	ids := map[string]bool{}
	for i, k := range g.BridgeKeys {
		p := fmt.Sprintf("$.gate.bridge_keys[%d]", i)
		pub, err := ledger.ParsePublicKeyHex(k.PublicKey)
		switch {
		case err != nil:
			errs = append(errs, doc.errorf(p+".public_key", "public_key: %v", err))
		case string(pub.ID()) != k.KeyID:
			errs = append(errs, doc.errorf(p+".key_id", "key_id %q is not the id of this public key (%s)", k.KeyID, pub.ID()))
		case pub.ID() == gate.DemoKeyID():
			errs = append(errs, doc.errorf(p+".public_key", "this is the published demo key, which authorizes nothing; pin the Bridge's own key"))
		case ids[k.KeyID]:
			errs = append(errs, doc.errorf(p+".key_id", "key %s is pinned twice", k.KeyID))
		}
		ids[k.KeyID] = true
	}
	if len(g.BridgeKeys) == 0 {
		errs = append(errs, doc.errorf("$.gate", "gate.bridge_keys: pin at least one Bridge public key (proofsite gate keygen prints one)"))
	}

	files := map[string]bool{}
	for i, f := range g.ClaimFiles {
		p := fmt.Sprintf("$.gate.claim_files[%d]", i)
		switch {
		case !validClaimFile(f):
			errs = append(errs, doc.errorf(p, "claim file %q must be a clean path inside the content folder, of A-Z a-z 0-9 . _ / -", f))
		case files[f]:
			errs = append(errs, doc.errorf(p, "claim file %s is listed twice", f))
		}
		files[f] = true
	}
	return errs
}

// validClaimFile reports whether f is a clean slash path inside the
// content folder whose claim name is a valid scope item.
func validClaimFile(f string) bool {
	return fs.ValidPath(f) && f != "." && gate.ValidScopeItem(ClaimFilePrefix+f)
}

// ClaimFilePrefix starts the claim name of a claim file:
// "file:products/gate/README.md".
const ClaimFilePrefix = "file:"

// Node returns the node with the given federation id.
func (c *Config) Node(id string) (Node, bool) {
	for _, n := range c.Nodes {
		if n.ID != "" && n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Capability returns the board value of key.
func (c *Config) Capability(key string) (Capability, bool) {
	for _, cp := range c.Capabilities {
		if cp.Key == key {
			return cp, true
		}
	}
	return Capability{}, false
}

// Documented returns the seam documented for block, if any.
func (l LedgerConfig) Documented(block int) (Seam, bool) {
	for _, s := range l.DocumentedSeams {
		if s.Block == block {
			return s, true
		}
	}
	return Seam{}, false
}
