package content

import (
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/gate"
)

// ConfigFile is the name of the site configuration inside a content directory.
const ConfigFile = "site.yaml"

var (
	idPattern          = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	designationPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	readinessValues    = []string{"live", "partial", "roadmap"}
	countSources       = []string{"published", "runtime", "declared"}
)

// parseCharter decodes and validates site.yaml.
func parseCharter(src []byte) (*charter.Charter, *yamlDoc, []*Error) {
	var c charter.Charter
	doc, yerr := decodeYAML(ConfigFile, src, 0, &c)
	if yerr != nil {
		return nil, nil, []*Error{yerr}
	}
	return &c, doc, validateCharter(&c, doc)
}

// validateCharter checks everything site.yaml can get wrong on its own.
func validateCharter(c *charter.Charter, doc *yamlDoc) []*Error {
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

	need("$.site.title", c.Title)
	need("$.site.summary", c.Summary)
	absURL("$.site.base_url", c.BaseURL)
	absURL("$.site.api_url", c.APIURL)
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
		case !slices.Contains(charter.CapabilityKeys, cp.Key):
			errs = append(errs, doc.errorf(p+".key", "unknown capability %q (known: %s)", cp.Key, strings.Join(charter.CapabilityKeys, ", ")))
		case seen[cp.Key]:
			errs = append(errs, doc.errorf(p+".key", "capability %q is listed twice", cp.Key))
		}
		seen[cp.Key] = true
		need(p+".value", cp.Value)
	}
	for _, k := range charter.CapabilityKeys {
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
	if c.Ledger.WitnessQuorum < 0 {
		errs = append(errs, doc.errorf("$.ledger.witness_quorum", "witness_quorum must be 1 or more, found %d", c.Ledger.WitnessQuorum))
	}
	if w := c.Runtime.Witnesses; w > 0 && c.Ledger.Quorum() > w {
		errs = append(errs, doc.errorf("$.ledger.witness_quorum", "witness_quorum %d needs at least as many witness keys, runtime.witnesses is %d", c.Ledger.Quorum(), w))
	}

	for i, l := range c.Stewardship.Layers {
		p := fmt.Sprintf("$.stewardship.layers[%d]", i)
		need(p+".key", l.Key)
		need(p+".name", l.Name)
		if !slices.Contains(readinessValues, l.Readiness) {
			errs = append(errs, doc.errorf(p+".readiness", "readiness must be one of %s, found %q", strings.Join(readinessValues, ", "), l.Readiness))
		}
	}

	errs = append(errs, validateGate(c, doc)...)
	errs = append(errs, validateRuntime(c.Runtime, doc)...)

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
// action of it. The gate package checks the same policy again when it is
// built; these checks exist to name the line.
func validateGate(c *charter.Charter, doc *yamlDoc) []*Error {
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
	return fs.ValidPath(f) && f != "." && gate.ValidScopeItem(gate.ClaimFilePrefix+f)
}

// validateRuntime checks the runtime defaults; each is optional.
func validateRuntime(r charter.Runtime, doc *yamlDoc) []*Error {
	var errs []*Error
	if r.WalkEvery < 0 {
		errs = append(errs, doc.errorf("$.runtime.walk_every", "runtime.walk_every must be a positive duration such as 10m, found %s", r.WalkEvery))
	}
	if r.PostLimit != "" {
		if _, err := charter.ParseRate(r.PostLimit); err != nil {
			errs = append(errs, doc.errorf("$.runtime.post_limit", "runtime.post_limit: %v", err))
		}
	}
	if r.Witnesses < 0 {
		errs = append(errs, doc.errorf("$.runtime.witnesses", "runtime.witnesses must be 1 or more, found %d", r.Witnesses))
	}
	return errs
}
