package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/site/content"
)

// The statements of the site about what is live are derived from the
// routes where they are generated (discover's features, the town map,
// nodes' public routes, airlocks, ai.json, _redirects: see live and
// site/render). What people write (the pages, the kits, the guide, the
// records, site.yaml's texts) is checked here against the same route
// definition, so that a change that adds a route fails until its text
// says the feature is live, and text cannot call a feature live before
// its route answers.
//
// The rule, per sentence (a table cell, a line of code, a JSON string, a
// sentence of prose): a sentence that names a route of the live namespace
// (/api/..., /mcp) or a feature (featurePhrases) that this server does not
// answer must say "roadmap"; a sentence that says "roadmap" of routes and
// features that all answer is stale. A record object with a "state" speaks
// for its strings: "roadmap" excuses them (and is stale once every route
// of its "depends_on", or else every route it names, answers), while
// "live_and_proven" requires every route they name, and every route of its
// "depends_on", to answer.
//
// The constitution is left out: it states rules, not what this server
// answers (what is proven today is the board's and the records' to say,
// Article 43).

// featurePhrases name each feature of the specification (live.Features)
// in prose, beside its route.
var featurePhrases = map[string][]string{
	"proof_surface": nil, "strict_table": nil, "chain_status": nil, "chain_latest": nil, "ledger_export": nil, "audit_map": nil,
	"agent_handshake": nil, "agent_receipt": {"signed receipt"},
	"agent_query":        {"airlock"},
	"airlock_ember":      {"airlock"},
	"airlock_lumen":      {"airlock"},
	"chat":               {"chat route", "public chat", "chat node"},
	"pulse":              {"pulse route"},
	"voice":              {"voice route", "text-to-speech"},
	"towns":              {"digital town", "live town", "town route", "wall of signatures"},
	"evaluate":           {"evaluation api", "52-pattern precheck"},
	"govern":             {"suggested rewrite"},
	"certify":            {"attestation preview", "certification preview"},
	"verify_certificate": {"verify a certificate"},
	"compliance":         {"compliance report"},
	"telemetry":          {"telemetry"},
	"mcp":                {"mcp"},
	"memory":             {"dual-write", "memory system"},
}

var (
	routeMention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:/api(?:/[A-Za-z0-9_.{}:-]+)*)|/mcp)(?:[^A-Za-z0-9_/-]|$)`)
	sentenceEnd  = regexp.MustCompile(`[.!?]\s+|;\s+`)
)

// claims checks sentences against the routes a server answers.
type claims struct {
	answers  func(string) bool
	features map[string]string // feature -> route
	errs     []string
}

// unserved returns what a sentence names that does not answer, and
// whether it names a feature of the specification (by its route or in
// prose).
func (c *claims) unserved(sentence string) (missing []string, feature bool) {
	for _, m := range routeMention.FindAllStringSubmatch(sentence, -1) {
		p := strings.TrimRight(m[1], ".:")
		if p == "/api" || strings.HasSuffix(p, "/*") || strings.Contains(p, "...") {
			continue
		}
		feature = feature || slices.Contains(slices.Collect(maps.Values(c.features)), p)
		if !c.answers(p) {
			missing = append(missing, p)
		}
	}
	lower := strings.ToLower(sentence)
	for name, phrases := range featurePhrases {
		for _, ph := range phrases {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(ph) + `\b`).MatchString(lower) {
				feature = true
				if !c.answers(c.features[name]) {
					missing = append(missing, name+` ("`+ph+`")`)
				}
			}
		}
	}
	return missing, feature
}

// check applies the rule to every sentence of text.
func (c *claims) check(where, text string) {
	for sentence := range strings.SplitSeq(sentenceEnd.ReplaceAllString(text, "\n"), "\n") {
		missing, feature := c.unserved(sentence)
		roadmap := strings.Contains(strings.ToLower(sentence), "roadmap")
		switch {
		case len(missing) > 0 && !roadmap:
			c.errs = append(c.errs, fmt.Sprintf("%s: %q names %s, which this server does not answer, without saying roadmap", where, strings.TrimSpace(sentence), strings.Join(slices.Compact(missing), ", ")))
		case feature && roadmap && len(missing) == 0:
			c.errs = append(c.errs, fmt.Sprintf("%s: %q says roadmap of features that answer", where, strings.TrimSpace(sentence)))
		}
	}
}

// checkJSON applies the rule to a record: objects with a state speak for
// their strings.
func (c *claims) checkJSON(where string, v any) {
	switch v := v.(type) {
	case string:
		c.check(where, v)
	case []any:
		for i, e := range v {
			c.checkJSON(fmt.Sprintf("%s[%d]", where, i), e)
		}
	case map[string]any:
		state, _ := v["state"].(string)
		switch state {
		case "roadmap":
			var routes []string
			if deps, ok := v["depends_on"]; ok {
				collectRoutes(deps, &routes)
			} else {
				collectRoutes(v, &routes)
			}
			if len(routes) > 0 && !slices.ContainsFunc(routes, func(r string) bool { return !c.answers(r) }) {
				c.errs = append(c.errs, fmt.Sprintf("%s: roadmap, but every route it depends on answers: %v", where, routes))
			}
			return
		case "live_and_proven":
			var routes []string
			collectRoutes(v, &routes)
			for _, r := range routes {
				if !c.answers(r) {
					c.errs = append(c.errs, fmt.Sprintf("%s: live_and_proven, but %s does not answer", where, r))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k != "depends_on" {
				c.checkJSON(where+"."+k, v[k])
			}
		}
	}
}

// collectRoutes gathers the routes a JSON value names, in its strings and
// in "depends_on" lists ("POST /api/chat" or "/api/chat").
func collectRoutes(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		for _, m := range routeMention.FindAllStringSubmatch(v, -1) {
			*out = append(*out, strings.TrimRight(m[1], ".:"))
		}
	case []any:
		for _, e := range v {
			collectRoutes(e, out)
		}
	case map[string]any:
		for _, e := range v {
			collectRoutes(e, out)
		}
	}
}

func TestClaimsFollowRoutes(t *testing.T) {
	s, err := content.Load(os.DirFS(realContent))
	if err != nil {
		t.Fatal(err)
	}
	c := &claims{answers: live.Answers(*liveSite(s)), features: live.Features()}
	for f := range c.features {
		if _, ok := featurePhrases[f]; !ok {
			t.Errorf("feature %s has no entry in featurePhrases: name how prose calls it (or nil)", f)
		}
	}
	err = filepath.WalkDir(realContent, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(realContent, path)
		switch {
		case strings.HasPrefix(rel, "constitution/"):
		case strings.HasSuffix(path, ".md"):
			for i, line := range strings.Split(string(data), "\n") {
				c.check(fmt.Sprintf("%s:%d", rel, i+1), line)
			}
		case strings.HasPrefix(rel, "records/") && strings.HasSuffix(path, ".json"):
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				return err
			}
			c.checkJSON(rel, v)
		case rel == content.ConfigFile:
			var v any
			if err := yaml.Unmarshal(data, &v); err != nil {
				return err
			}
			c.checkJSON(rel, yamlToJSON(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.errs {
		t.Error(e)
	}
}

// yamlToJSON turns decoded YAML into the shapes encoding/json decodes to,
// leaving out what is data rather than text: node public routes and town
// ids, which the live edge and the build publish as live or roadmap
// themselves.
func yamlToJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if k != "public_route" {
				out[k] = yamlToJSON(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = yamlToJSON(e)
		}
		return out
	case string:
		return v
	}
	return nil
}

// TestHistoryHoldsNoPreview: the specification says a certification
// preview writes nothing to the chain, so the bundled history holds no
// preview block.
func TestHistoryHoldsNoPreview(t *testing.T) {
	f, err := os.Open(filepath.Join(realContent, "ledger", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ledger.ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if strings.Contains(r.Kind, "preview") {
			t.Errorf("history row %d is a %s block: a preview writes nothing to the chain", r.Index, r.Kind)
		}
	}
}

// The claims rule itself, against a server that answers a chosen set.
func TestClaimsRule(t *testing.T) {
	answering := map[string]bool{"/api/ledger/verify": true, "/api/chat": true}
	c := &claims{answers: func(p string) bool { return answering[p] }, features: live.Features()}
	for _, tc := range []struct {
		sentence string
		ok       bool
	}{
		{"Read /api/ledger/verify.", true},
		{"POST /api/v1/query refuses extra fields.", false},          // not answered, not marked
		{"POST /api/v1/query (roadmap) refuses extra fields.", true}, // marked
		{"The public airlock keeps nothing.", false},                 // a feature named in prose
		{"The public airlock (roadmap) keeps nothing.", true},
		{"POST /api/chat is roadmap.", false},        // stale: the route answers
		{"The public chat route is roadmap.", false}, // stale, in prose
		{"Quorum approval is roadmap.", true},        // names no feature
		{"MCP is roadmap.", true},
	} {
		c.errs = nil
		c.check("test", tc.sentence)
		if ok := len(c.errs) == 0; ok != tc.ok {
			t.Errorf("%q: ok %v, want %v (%v)", tc.sentence, ok, tc.ok, c.errs)
		}
	}
	c.errs = nil
	c.checkJSON("record", map[string]any{"control": "X", "state": "live_and_proven", "depends_on": []any{"POST /api/memory/store"}})
	c.checkJSON("record", map[string]any{"control": "Y", "state": "roadmap", "depends_on": []any{"POST /api/chat"}})
	if len(c.errs) != 2 {
		t.Errorf("records: %v", c.errs)
	}
}

// verifierVerdicts are the verdicts only the downloadable verifier gives
// (it reads files and hosts; the store's walk reads neither).
var verifierVerdicts = []string{"FAIL_UNREADABLE_EXPORT", "FAIL_UNREACHABLE_HOST", "FAIL_UNREADABLE_HOST_RESPONSE", "FAIL_HOST_DISAGREES", "FAIL_STALE_RESPONSE"}

// TestOneNamePerVerdictAndNode: every verdict named anywhere (content,
// templates, README, the verifier, ledger, live) is a verdict the code
// gives, every node designation is one of site.yaml's, and every key role
// is one the ledger knows.
func TestOneNamePerVerdictAndNode(t *testing.T) {
	known := append(ledger.VerdictNames(), verifierVerdicts...)
	verifier, _ := os.ReadFile("../verify-ledger/main.go")
	for _, v := range known {
		if v != ledger.VerdictStorage && !strings.Contains(string(verifier), `"`+v+`"`) { // the store's bookkeeping is the store's alone
			t.Errorf("verify-ledger never gives %s", v)
		}
	}
	s, err := content.Load(os.DirFS(realContent))
	if err != nil {
		t.Fatal(err)
	}
	var designations []string
	for _, n := range s.Charter.Nodes {
		designations = append(designations, n.Designation)
	}
	verdict := regexp.MustCompile(`\b(?:PASS|FAIL)_[A-Z_]+\b`)
	designation := regexp.MustCompile(`\bS[0-9]{1,2}_[A-Z]+\b`)
	role := regexp.MustCompile(`"role":\s*"([a-z_]+)"`)
	roles := []string{string(ledger.RoleWriter), string(ledger.RoleWitness), string(ledger.RoleBridge), string(ledger.RoleNode)}
	var files []string
	for _, root := range []string{realContent, "../../templates", "../../ledger", "../../live", "../verify-ledger"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, "_test.go") && !strings.Contains(path, "testdata") &&
				slices.Contains([]string{".md", ".json", ".yaml", ".templ", ".go", ".jsonl"}, filepath.Ext(path)) {
				files = append(files, path)
			}
			return nil
		})
	}
	files = append(files, "../../README.md")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range slices.Compact(slices.Sorted(slices.Values(verdict.FindAllString(string(data), -1)))) {
			if !slices.Contains(known, v) {
				t.Errorf("%s names the verdict %s, which no verifier gives", path, v)
			}
		}
		for _, d := range slices.Compact(slices.Sorted(slices.Values(designation.FindAllString(string(data), -1)))) {
			if !slices.Contains(designations, d) {
				t.Errorf("%s names the node %s, which is not on the roster", path, d)
			}
		}
		for _, m := range role.FindAllStringSubmatch(string(data), -1) {
			if !slices.Contains(roles, m[1]) {
				t.Errorf("%s names the key role %q", path, m[1])
			}
		}
	}
}
