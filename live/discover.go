package live

import "github.com/proofsite/proofsite/ledger/charter"

// Discovery is the master index.
type Discovery struct {
	Service   Identity        `json:"service"`
	Endpoints []Endpoint      `json:"endpoints" doc:"Every documented route of both API descriptions and every static surface"`
	Towns     []TownEntry     `json:"towns"`
	Products  []Product       `json:"products"`
	Features  map[string]bool `json:"features" doc:"Which parts of the specification this server answers today"`
	Fresh
}

// TownEntry is one town on the town map.
type TownEntry struct {
	charter.Town
	URL string `json:"url"`
}

// Product is one product of the catalog.
type Product struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Page        string              `json:"page"`
	Kits        []string            `json:"kits"`
	Maturity    string              `json:"maturity"`
	Board       map[string]string   `json:"capability_board"`
	PublishRule charter.PublishRule `json:"publish_rule"`
}

// features maps each feature of the specification to the route that
// provides it; a feature is on when that route is defined here.
var features = map[string]string{
	"proof_surface":   "/api/ledger/verify",
	"strict_table":    "/api/ledger/strict-table",
	"chain_status":    "/api/chain/status",
	"chain_latest":    "/api/chain/latest",
	"audit_map":       "/api/audit",
	"agent_handshake": "/api/v1/handshake",
	"chat":            "/api/chat",
	"pulse":           "/api/pulse",
	"voice":           "/api/voice",
	"towns":           "/api/v1/towns",
	"evaluate":        "/api/v1/evaluate",
	"certify":         "/api/v1/certify",
	"mcp":             "/mcp",
	"memory":          "/api/memory/status",
}

func (s *Server) discovery(d *definition) Discovery {
	catalog := d.catalog()
	defined := map[string]bool{}
	for _, e := range catalog {
		defined[e.Path] = true
	}
	disc := Discovery{Service: s.identity(), Endpoints: catalog, Features: map[string]bool{}, Fresh: fresh()}
	for name, path := range features {
		disc.Features[name] = defined[path]
	}
	for _, t := range s.site.Towns {
		disc.Towns = append(disc.Towns, TownEntry{Town: t, URL: s.site.APIURL + "/api/v1/towns/" + t.ID})
	}
	board := s.site.Board()
	disc.Products = []Product{{
		ID: "gate", Name: "The gate: authorization checkpoint", Page: s.site.BaseURL + "/gate.html",
		Kits:     []string{s.site.BaseURL + "/products/gate/README.md", s.site.BaseURL + "/products/gate/PRODUCT_SHEET.md"},
		Maturity: board["maturity"], Board: board, PublishRule: s.site.PublishRule,
	}}
	return disc
}

// Audit is the proof map for outside reviewers: what to check, where, and
// what each check proves. It is built from configuration and the cached
// verdict; it calls no route.
type Audit struct {
	Summary     string            `json:"summary"`
	Steps       []AuditStep       `json:"steps"`
	Readiness   []charter.Layer   `json:"readiness" doc:"The stewardship closure layers as configured"`
	Pins        Pins              `json:"pins"`
	Verifier    VerifierRef       `json:"verifier"`
	CannotProve []string          `json:"cannot_prove"`
	Board       map[string]string `json:"capability_board"`
	Fresh
}

// AuditStep is one check a reviewer runs.
type AuditStep struct {
	Check  string `json:"check"`
	URL    string `json:"url"`
	Proves string `json:"proves"`
	Ready  bool   `json:"ready"`
}

// Pins are what a reviewer should write down and compare next time.
type Pins struct {
	GenesisHash string   `json:"genesis_hash,omitempty"`
	Checkpoint  string   `json:"checkpoint,omitempty" doc:"SIZE:HEAD_HASH; a later chain must extend it"`
	Keys        []string `json:"key_ids"`
}

// VerifierRef points to the downloadable verifier.
type VerifierRef struct {
	Source string   `json:"source"`
	SHA256 string   `json:"sha256_file"`
	Usage  []string `json:"usage"`
}

func (s *Server) audit() Audit {
	base := s.site.BaseURL
	verified := s.chainHealth().Verified
	a := Audit{
		Summary: "Recompute the verdict yourself: fetch the metadata-only table, rebuild every hash, check every signature against the pinned keys, walk the spine from the head to the pinned genesis, and compare with the served verdict.",
		Steps: []AuditStep{
			{"Read the served verdict; canonical_spine_valid is authoritative", base + "/api/ledger/verify", "what the server claims, at request time", verified},
			{"Fetch every row, metadata only", base + "/api/ledger/strict-table", "the inputs to recompute every hash and the strict-table breaks", verified},
			{"Pin the keys, genesis and a checkpoint", base + "/api/chain/status", "which keys sign, and a checkpoint to hold the chain to later", true},
			{"Run the downloadable verifier against this server", base + "/downloads/verify-ledger.go", "the verdict, recomputed on your machine, and drift if generated_at is stale", true},
			{"Check the capability claims", base + "/gate.html", "which controls are live and which are roadmap", true},
			{"Check the constitution text you were given", base + "/constitution-status.json", "the SHA-256 of the published text and every article count", true},
		},
		Readiness: s.site.Stewardship.Layers,
		Board:     s.site.Board(),
		Verifier: VerifierRef{Source: base + "/downloads/verify-ledger.go", SHA256: base + "/downloads/verify-ledger.go.sha256",
			Usage: []string{"go run verify-ledger.go " + base, "go run verify-ledger.go --checkpoint SIZE:HASH " + base}},
		CannotProve: []string{
			"A history rewritten and re-signed with a stolen writer key verifies against itself: keep a checkpoint and require later chains to extend it.",
			"Payloads and descriptions are private; the public table proves what was committed to, not what it said.",
			"The gate is a checkpoint an orchestrator invokes; runtime enforcement, node quorum and the dissent channel are roadmap.",
		},
		Fresh: fresh(),
	}
	if s.chain != nil {
		if g := s.chain.Genesis(); !g.IsZero() {
			a.Pins.GenesisHash = g.Hash().String()
		}
		if v, ok := s.chain.Verdict(); ok && v.Checkpoint != nil {
			a.Pins.Checkpoint = v.Checkpoint.String()
		}
		for _, k := range s.chain.Keys().Published() {
			a.Pins.Keys = append(a.Pins.Keys, string(k.KeyID))
		}
	}
	return a
}
