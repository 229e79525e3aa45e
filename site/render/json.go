package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/proofsite/proofsite/ledger/charter"
)

// marshal renders v as indented JSON with a final newline; struct field
// order and sorted map keys make it deterministic.
func marshal(v any) ([][]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return [][]byte{append(b, '\n')}, nil
}

type downloadRef struct {
	Title  string `json:"title"`
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

type constitutionStatus struct {
	Title           string        `json:"title"`
	Version         string        `json:"version"`
	Status          string        `json:"status"`
	Adopted         string        `json:"adopted,omitempty"`
	License         string        `json:"license"`
	Text            textRef       `json:"text"`
	RuntimeArtifact *runtimeRef   `json:"runtime_artifact,omitempty"`
	CountsDiffer    bool          `json:"article_counts_differ"`
	Disclosure      string        `json:"disclosure"`
	ArticleCounts   []countReport `json:"article_counts"`
}

type textRef struct {
	URL      string `json:"url"`
	SHA256   string `json:"sha256"`
	Articles int    `json:"articles"`
	Pages    string `json:"pages"`
}

type runtimeRef struct {
	Version  string `json:"version"`
	Articles int    `json:"articles"`
	License  string `json:"license"`
	URL      string `json:"url"`
	Download string `json:"download"`
	SHA256   string `json:"sha256"`
}

type countReport struct {
	Surface  string `json:"surface"`
	Articles int    `json:"articles"`
	Source   string `json:"source"`
	Checked  bool   `json:"checked_at_build"`
	Note     string `json:"note,omitempty"`
}

func (b *build) statusDocument() constitutionStatus {
	c := b.cfg.Constitution
	sum, _ := shaFile(constitutionTextPath, b.constitutionText())
	st := constitutionStatus{
		Title: c.Title, Version: c.Version, Status: c.Status, Adopted: c.Adopted.String(), License: c.License,
		Text: textRef{URL: b.abs("/" + constitutionTextPath), SHA256: sum, Articles: len(b.s.Articles), Pages: b.abs("/constitution/")},
	}
	if rt := b.s.Runtime; rt != nil {
		rsum, _ := shaFile(rt.Source, rt.Raw)
		st.RuntimeArtifact = &runtimeRef{Version: rt.Version, Articles: len(rt.Articles), License: rt.License,
			URL: b.abs("/api/constitution"), Download: b.abs("/" + b.runtimePath()), SHA256: rsum}
	}
	counts := map[int]bool{}
	var list []string
	for _, s := range c.Surfaces {
		st.ArticleCounts = append(st.ArticleCounts, countReport{Surface: s.Name, Articles: s.Articles, Source: s.Source, Checked: s.Source != "declared", Note: s.Note})
		if !counts[s.Articles] {
			list = append(list, fmt.Sprint(s.Articles))
		}
		counts[s.Articles] = true
	}
	st.CountsDiffer = len(counts) > 1
	if st.CountsDiffer {
		st.Disclosure = fmt.Sprintf("Article counts differ between surfaces (%s); each is listed in article_counts with how it is known.", strings.Join(list, ", "))
	} else {
		st.Disclosure = "Every surface shows the same article count."
	}
	return st
}

func (b *build) constitutionStatusJob() job {
	fp := newDigest().str("constitution-status").sums(b.config, b.articles, b.runtime).sum()
	return job{key: "constitution-status", paths: []string{constitutionStatusPath}, fp: fp, run: func() ([][]byte, error) {
		return marshal(b.statusDocument())
	}}
}

type horizon struct {
	Summary   string         `json:"summary"`
	Readiness map[string]int `json:"readiness"`
	Layers    []horizonLayer `json:"layers"`
}

type horizonLayer struct {
	Key       string   `json:"key"`
	Name      string   `json:"name"`
	Readiness string   `json:"readiness"`
	Summary   string   `json:"summary"`
	Evidence  []string `json:"evidence"`
}

func (b *build) stewardshipJob() job {
	return job{key: "stewardship", paths: []string{stewardshipPath}, fp: newDigest().str("stewardship").sums(b.config).sum(), run: func() ([][]byte, error) {
		st := b.cfg.Stewardship
		h := horizon{Summary: st.Summary, Readiness: map[string]int{"live": 0, "partial": 0, "roadmap": 0}}
		for _, l := range st.Layers {
			h.Readiness[l.Readiness]++
			evidence := make([]string, len(l.Evidence))
			for i, e := range l.Evidence {
				evidence[i] = b.abs(e)
			}
			h.Layers = append(h.Layers, horizonLayer{Key: l.Key, Name: l.Name, Readiness: l.Readiness, Summary: l.Summary, Evidence: evidence})
		}
		return marshal(h)
	}}
}

// aiManifest is /.well-known/ai.json, the machine-readable discovery manifest.
type aiManifest struct {
	SchemaVersion  string            `json:"schema_version"`
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	License        string            `json:"license"`
	Site           string            `json:"site"`
	API            string            `json:"api"`
	Organisation   aiOrganisation    `json:"organisation"`
	Entrypoints    map[string]string `json:"entrypoints"`
	Proof          aiProof           `json:"proof"`
	HumanAuthority aiAuthority       `json:"human_authority"`
	Capabilities   map[string]string `json:"capability_board"`
	Constitution   aiConstitution    `json:"constitution"`
	Nodes          []aiNode          `json:"nodes"`
	Towns          []aiTown          `json:"towns"`
	Downloads      []downloadRef     `json:"downloads"`
}

type aiOrganisation struct {
	Name      string `json:"name"`
	LegalName string `json:"legal_name,omitempty"`
	Contact   string `json:"contact,omitempty"`
}

type aiProof struct {
	Verify           string    `json:"verify"`
	StrictTable      string    `json:"strict_table"`
	ChainStatus      string    `json:"chain_status"`
	ChainLatest      string    `json:"chain_latest"`
	IntegrityField   string    `json:"integrity_field"`
	DeprecatedFields []string  `json:"deprecated_fields"`
	DocumentedSeams  []seamRef `json:"documented_seams"`
	Keys             []Key     `json:"keys,omitempty"`
	KeysURL          string    `json:"keys_url"`
	Freshness        string    `json:"freshness"`
	AuditorGuide     string    `json:"auditor_guide,omitempty"`
}

type seamRef struct {
	Block  int    `json:"block"`
	Reason string `json:"reason"`
}

type aiAuthority struct {
	Boundary    string `json:"boundary"`
	PublishRule string `json:"publish_rule"`
	Action      string `json:"action"`
	Requires    string `json:"requires"`
	Disclaimer  string `json:"disclaimer"`
}

type aiConstitution struct {
	Version        string `json:"version"`
	Status         string `json:"status"`
	Articles       int    `json:"articles"`
	Text           string `json:"text"`
	TextSHA256     string `json:"text_sha256"`
	StatusURL      string `json:"status_url"`
	Runtime        string `json:"runtime"`
	RuntimeVersion string `json:"runtime_version,omitempty"`
}

type aiNode struct {
	Designation  string `json:"designation"`
	Name         string `json:"name"`
	ID           string `json:"id,omitempty"`
	Kind         string `json:"kind"`
	Town         string `json:"town,omitempty"`
	PublicRoute  string `json:"public_route,omitempty"`  // while the live edge answers it
	RoadmapRoute string `json:"roadmap_route,omitempty"` // announced, not answered yet
}

type aiTown struct {
	ID     string `json:"id"`
	Node   string `json:"node"`
	Name   string `json:"name"`
	Status string `json:"status"`        // live or roadmap
	URL    string `json:"url,omitempty"` // while the live edge answers it
}

// answers reports whether the live edge answers path.
func (b *build) answers(path string) bool { return b.r.opts.Answers != nil && b.r.opts.Answers(path) }

// keysURL is where the keys are published: the trust document when the
// build publishes one, else the live chain status.
func (b *build) keysURL() string {
	for _, a := range b.r.opts.Artifacts {
		if a.Path == TrustDocumentPath {
			return b.abs("/" + TrustDocumentPath)
		}
	}
	return b.abs("/api/chain/status")
}

func (b *build) aiJob() job {
	fp := newDigest().str("ai").sums(b.config, b.articles, b.runtime, b.summaries, b.docs, b.r.optsDigest).sum()
	return job{key: "ai.json", paths: []string{aiPath}, fp: fp, run: func() ([][]byte, error) {
		cfg := b.cfg
		status := b.statusDocument()
		m := aiManifest{
			SchemaVersion: "1.0", Name: cfg.Title, Description: strings.Join(strings.Fields(cfg.Summary), " "),
			License: cfg.License, Site: b.base, API: b.api,
			Organisation: aiOrganisation{Name: cfg.Organisation.Name, LegalName: cfg.Organisation.LegalName, Contact: cfg.Organisation.Contact},
			Entrypoints: map[string]string{
				"llms_txt":    b.abs("/" + llmsPath),
				"openapi":     b.abs("/openapi.json"),
				"api_openapi": b.api + "/api/v1/openapi.json",
				"discover":    b.abs("/api/discover"),
				"health":      b.abs("/api/health"),
				"sitemap":     b.abs("/" + sitemapPath),
			},
			Proof: aiProof{
				Verify: b.abs("/api/ledger/verify"), StrictTable: b.abs("/api/ledger/strict-table"),
				ChainStatus: b.abs("/api/chain/status"), ChainLatest: b.api + "/api/chain/latest",
				IntegrityField: "canonical_spine_valid", DeprecatedFields: []string{"valid"},
				Keys: b.r.opts.Keys, KeysURL: b.keysURL(),
				Freshness: "every live JSON response carries a request-time generated_at and Cache-Control: no-store",
			},
			HumanAuthority: aiAuthority{Boundary: cfg.Organisation.HumanAuthority, PublishRule: cfg.PublishRule.Text,
				Action: cfg.PublishRule.Action, Requires: cfg.PublishRule.Requires, Disclaimer: cfg.PublishRule.Disclaimer},
			Capabilities: map[string]string{},
			Constitution: aiConstitution{Version: status.Version, Status: status.Status, Articles: status.Text.Articles,
				Text: status.Text.URL, TextSHA256: status.Text.SHA256, StatusURL: b.abs("/" + constitutionStatusPath), Runtime: b.abs("/api/constitution")},
			Nodes: []aiNode{}, Towns: []aiTown{}, Downloads: []downloadRef{},
		}
		if status.RuntimeArtifact != nil {
			m.Constitution.RuntimeVersion = status.RuntimeArtifact.Version
		}
		for _, s := range cfg.Ledger.DocumentedSeams {
			m.Proof.DocumentedSeams = append(m.Proof.DocumentedSeams, seamRef{Block: s.Block, Reason: strings.Join(strings.Fields(s.Reason), " ")})
		}
		for _, c := range cfg.Capabilities {
			m.Capabilities[c.Key] = c.Value
		}
		if b.answers("/mcp") {
			m.Entrypoints["mcp"] = b.abs("/mcp")
		}
		for _, n := range cfg.Nodes {
			n = n.Served(b.answers)
			m.Nodes = append(m.Nodes, aiNode{Designation: n.Designation, Name: n.Name, ID: n.ID, Kind: n.Kind, Town: n.Town,
				PublicRoute: n.PublicRoute, RoadmapRoute: n.RoadmapRoute})
		}
		for _, t := range cfg.Towns {
			town := aiTown{ID: t.ID, Node: t.Node, Name: t.Name, Status: "roadmap"}
			if path := charter.TownPath(t.ID); b.answers(path) {
				town.Status, town.URL = "live", b.api+path
			}
			m.Towns = append(m.Towns, town)
		}
		m.Downloads = append(m.Downloads, downloadRef{Title: status.Title, URL: status.Text.URL, SHA256: status.Text.SHA256})
		for _, d := range b.docPages() {
			sum, _ := shaFile(d.TwinPath(), pageTwin(d, ""))
			m.Downloads = append(m.Downloads, downloadRef{Title: d.Title, URL: b.abs("/" + d.TwinPath()), SHA256: sum})
			if strings.HasPrefix(d.Path, "docs/") && m.Proof.AuditorGuide == "" {
				m.Proof.AuditorGuide = b.abs("/" + d.TwinPath())
			}
		}
		for _, a := range b.r.opts.Artifacts {
			if a.Downloadable {
				sum, _ := shaFile(a.Path, a.Data)
				m.Downloads = append(m.Downloads, downloadRef{Title: a.Title, URL: b.abs("/" + a.Path), SHA256: sum})
			}
		}
		return marshal(m)
	}}
}
