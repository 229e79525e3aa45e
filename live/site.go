package live

import (
	"encoding/json"

	"github.com/proofsite/proofsite/ledger/charter"
)

// Site is what the live edge publishes about the organisation: its charter
// (site.yaml, whose types double as the JSON the routes answer with) and
// what cmd loaded beside it. live never reads content itself.
type Site struct {
	charter.Charter
	// Articles is the number of constitution articles published as text.
	Articles int
	// Runtime is the constitution runtime artifact exactly as published
	// (JSON, CC0), with its version and article count.
	RuntimeArtifact RuntimeArtifact
	// Records are the governance records (incorporation, shares, bylaws,
	// picofsky, threat-model, threat-intel), each a JSON object.
	Records map[string]json.RawMessage
}

// RuntimeArtifact is the constitution's runtime artifact.
type RuntimeArtifact struct {
	Raw      json.RawMessage
	Version  string
	Articles int
}

// ArticleCount discloses the article count of one surface.
type ArticleCount struct {
	Surface  string `json:"surface"`
	Articles int    `json:"articles"`
	Source   string `json:"source"`
}

// articleCounts are the article counts the charter discloses, as the
// loader tool publishes them.
func (s *Site) articleCounts() []ArticleCount {
	var out []ArticleCount
	for _, c := range s.Constitution.Surfaces {
		out = append(out, ArticleCount{Surface: c.Name, Articles: c.Articles, Source: c.Source})
	}
	return out
}
