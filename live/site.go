package live

import "encoding/json"

// Site is what the live edge publishes about the organisation. cmd fills it
// from the content directory; live never reads content itself. The types
// double as the JSON the routes answer with.
type Site struct {
	Title        string       `json:"title"`
	Summary      string       `json:"summary"`
	BaseURL      string       `json:"base_url"`
	APIURL       string       `json:"api_url"`
	License      string       `json:"license"`
	Organisation Organisation `json:"organisation"`
	Nodes        []Node       `json:"nodes"`
	Towns        []Town       `json:"towns"`
	Capabilities []Capability `json:"capabilities"`
	PublishRule  PublishRule  `json:"publish_rule"`
	Stewardship  []Layer      `json:"stewardship"`
	Constitution Constitution `json:"constitution"`
	// Records are the governance records (incorporation, shares, bylaws,
	// picofsky, threat-model, threat-intel), each a JSON object.
	Records map[string]json.RawMessage `json:"-"`
}

// Organisation is who publishes the ledger.
type Organisation struct {
	Name           string `json:"name"`
	LegalName      string `json:"legal_name,omitempty"`
	Jurisdiction   string `json:"jurisdiction,omitempty"`
	Contact        string `json:"contact,omitempty"`
	HumanAuthority string `json:"human_authority"`
}

// Node is one member of the roster.
type Node struct {
	ID          string `json:"id,omitempty" doc:"Federation id (s1..s7, bridge); empty for roster-only nodes"`
	Designation string `json:"designation"`
	Name        string `json:"name"`
	Kind        string `json:"kind" enum:"ai,human"`
	Role        string `json:"role,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Platform    string `json:"platform,omitempty"`
	Station     string `json:"station,omitempty"`
	TrustLevel  string `json:"trust_level,omitempty"`
	Town        string `json:"town,omitempty"`
	PublicRoute string `json:"public_route,omitempty"`
}

// Town is a node's persistent space.
type Town struct {
	ID          string `json:"id"`
	Node        string `json:"node"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Capability is one row of the capability maturity board.
type Capability struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Note  string `json:"note,omitempty"`
}

// PublishRule gates public claims behind Bridge authorization.
type PublishRule struct {
	Key        string `json:"key"`
	Action     string `json:"action"`
	Requires   string `json:"requires"`
	Text       string `json:"text"`
	Disclaimer string `json:"disclaimer,omitempty"`
}

// Layer is one closure layer of the stewardship horizon.
type Layer struct {
	Key       string   `json:"key"`
	Name      string   `json:"name"`
	Readiness string   `json:"readiness"`
	Summary   string   `json:"summary,omitempty"`
	Evidence  []string `json:"evidence,omitempty"`
}

// Constitution describes the texts and the runtime artifact.
type Constitution struct {
	Title    string `json:"title"`
	Version  string `json:"version"`
	Status   string `json:"status"`
	Articles int    `json:"articles"`
	// Runtime is the runtime artifact exactly as published (JSON, CC0).
	Runtime         json.RawMessage `json:"-"`
	RuntimeVersion  string          `json:"runtime_version"`
	RuntimeArticles int             `json:"runtime_articles"`
	Counts          []ArticleCount  `json:"article_counts"`
}

// ArticleCount discloses the article count of one surface.
type ArticleCount struct {
	Surface  string `json:"surface"`
	Articles int    `json:"articles"`
	Source   string `json:"source"`
}

// board returns the capability board as a map, the shape of the OpenAPI
// extension and the discovery documents.
func (s *Site) board() map[string]string {
	m := make(map[string]string, len(s.Capabilities))
	for _, c := range s.Capabilities {
		m[c.Key] = c.Value
	}
	return m
}

// node returns the node with federation id id.
func (s *Site) node(id string) (Node, bool) {
	for _, n := range s.Nodes {
		if n.ID != "" && n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}
