package live

import (
	"maps"

	"github.com/proofsite/proofsite/ledger/charter"
)

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
	Status string `json:"status" enum:"live,roadmap" doc:"live when this server answers the town's route; roadmap until then"`
	URL    string `json:"url,omitempty" doc:"The town's route, while it answers"`
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
// provides it; a feature is on when that route is defined here (Features).
var features = map[string]string{
	"proof_surface":      "/api/ledger/verify",
	"strict_table":       "/api/ledger/strict-table",
	"chain_status":       "/api/chain/status",
	"chain_latest":       "/api/chain/latest",
	"ledger_export":      ExportPath,
	"audit_map":          "/api/audit",
	"agent_handshake":    "/api/v1/handshake",
	"agent_query":        "/api/v1/query",
	"agent_receipt":      "/api/agent/receipt",
	"airlock_ember":      "/api/ember",
	"airlock_lumen":      "/api/lumen",
	"chat":               "/api/chat",
	"pulse":              "/api/pulse",
	"voice":              "/api/voice",
	"towns":              "/api/v1/towns",
	"evaluate":           "/api/v1/evaluate",
	"govern":             "/api/v1/govern",
	"certify":            "/api/v1/certify",
	"verify_certificate": "/api/v1/verify",
	"compliance":         "/api/v1/compliance",
	"telemetry":          "/api/v1/telemetry",
	"mcp":                "/mcp",
	"memory":             "/api/memory/status",
}

// Features returns each feature of the specification with the route that
// provides it: discover reports a feature as on exactly when that route is
// defined.
func Features() map[string]string { return maps.Clone(features) }

func (s *Server) discovery(d *definition) Discovery {
	disc := Discovery{Service: s.identity(), Endpoints: d.catalog(), Features: map[string]bool{}, Towns: d.towns(), Fresh: fresh()}
	for name, path := range features {
		disc.Features[name] = d.serves(path)
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
	TrustDocument string   `json:"trust_document" doc:"The file to pin whole: keys, genesis, seams with their hashes, witness quorum, log (verify-ledger --keys)"`
	GenesisHash   string   `json:"genesis_hash,omitempty"`
	Checkpoint    string   `json:"checkpoint,omitempty" doc:"The signed checkpoint: a C2SP note (the log's origin, the row count, the RFC 6962 Merkle root over every row) signed with the log's checkpoint key; empty unless the verdict passes. Save it to a file: verify-ledger --checkpoint FILE (or --state FILE) then requires the chain to extend it"`
	Keys          []string `json:"key_ids" doc:"Writer, witness and Bridge key ids"`
}

// VerifierRef points to the downloadable verifier.
type VerifierRef struct {
	Source string   `json:"source"`
	SHA256 string   `json:"sha256_file"`
	Usage  []string `json:"usage"`
}

// towns is the town map: each configured town, live with its URL only
// while its route answers.
func (d *definition) towns() []TownEntry {
	out := []TownEntry{}
	for _, t := range d.s.site.Towns {
		e := TownEntry{Town: t, Status: "roadmap"}
		if path := charter.TownPath(t.ID); d.serves(path) {
			e.Status, e.URL = "live", d.s.site.APIURL+path
		}
		out = append(out, e)
	}
	return out
}

// liveTown returns the node's town id while the town's route answers.
func (d *definition) liveTown(n charter.Node) string {
	if n.Town != "" && d.serves(charter.TownPath(n.Town)) {
		return n.Town
	}
	return ""
}

func (s *Server) audit() Audit {
	base := s.site.BaseURL
	verified := s.chainHealth().Verified
	a := Audit{
		Summary: "Recompute the verdict yourself: fetch the metadata-only table, rebuild every hash, check every signature against the pinned keys, walk the spine from the head to the pinned genesis, and compare with the served verdict.",
		Steps: []AuditStep{
			{"Read the served verdict; canonical_spine_valid is authoritative", base + "/api/ledger/verify", "what the server claims, at request time", verified},
			{"Fetch every row, metadata only", base + "/api/ledger/strict-table", "the inputs to recompute every hash and the strict-table breaks", verified},
			{"Pin the trust document", base + "/keys.json", "which keys sign, the genesis, the documented seams by hash, the witness quorum and the log's checkpoint key", s.static != nil && s.static.exists("/keys.json")},
			{"Keep the signed checkpoint", base + "/api/chain/status", "a checkpoint to hold the chain to later: a rewrite, a truncation or a replaced row no longer extends it", verified},
			{"Read the log as static tiles (C2SP tlog-tiles)", base + TilesPrefix + "checkpoint", "the signed checkpoint, hash tiles and row bundles as immutable files any CDN can serve: verify-ledger --tiles checks a new checkpoint against the one you kept from O(log n) tiles", s.tilesPublished()},
			{"Download the metadata-only export", base + ExportPath, "the rows and their signed checkpoint in one file, to verify offline", s.opts.Publisher != nil},
			{"Run the downloadable verifier against this server", base + "/downloads/verify-ledger.go", "the verdict, recomputed on your machine, and drift if generated_at is stale", true},
			{"Check the capability claims", base + "/gate.html", "which controls are live and which are roadmap", true},
			{"Check the constitution text you were given", base + "/constitution-status.json", "the SHA-256 of the published text and every article count", true},
		},
		Readiness: s.site.Stewardship.Layers,
		Board:     s.site.Board(),
		Verifier: VerifierRef{Source: base + "/downloads/verify-ledger.go", SHA256: base + "/downloads/verify-ledger.go.sha256",
			Usage: []string{"go run verify-ledger.go --keys keys.json --state checkpoint.txt " + base,
				"go run verify-ledger.go --tiles --keys keys.json --state tiles-state.json " + base + TilesPrefix,
				"go run verify-ledger.go --keys keys.json --checkpoint checkpoint.txt export.jsonl"}},
		CannotProve: []string{
			"A history rewritten and re-signed with a stolen writer key verifies against itself: keep a signed checkpoint and require later chains to extend it.",
			"One host holds the writer and the witness keys: witness signatures show the rows were not changed without those keys, not that an independent party saw them.",
			"Payloads and descriptions are private; the public table proves what was committed to, not what it said.",
			"The gate is a checkpoint an orchestrator invokes; runtime enforcement, node quorum and the dissent channel are roadmap.",
		},
		Fresh: fresh(),
	}
	a.Pins.TrustDocument = base + "/keys.json"
	if s.chain != nil {
		v, ok := s.chain.Verdict()
		pins := s.chainPins(v, ok)
		if pins.Genesis != nil {
			a.Pins.GenesisHash = pins.Genesis.Hash.String()
		}
		if pins.SignedCheckpoint != nil {
			a.Pins.Checkpoint = *pins.SignedCheckpoint
		}
		for _, k := range pins.Keys {
			a.Pins.Keys = append(a.Pins.Keys, string(k.KeyID))
		}
	}
	return a
}
