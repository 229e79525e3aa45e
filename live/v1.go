package live

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
)

var v1Tags = []string{"Verification API v1"}

// APIRoot is the root of the verification API.
type APIRoot struct {
	API       string     `json:"api"`
	Version   string     `json:"version"`
	OpenAPI   string     `json:"openapi"`
	Handshake string     `json:"handshake"`
	Workflows []Workflow `json:"workflows"`
	Fresh
}

// Workflow is one workflow of the verification API and whether this server
// answers it yet.
type Workflow struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Purpose   string `json:"purpose"`
	Available bool   `json:"available"`
}

// Declaration is what an agent may declare at the handshake. It is
// validated, never stored and never echoed.
type Declaration struct {
	Agent        string   `json:"agent" minLength:"1" maxLength:"100" doc:"Name of the agent"`
	Version      string   `json:"version,omitempty" maxLength:"40"`
	Purpose      string   `json:"purpose,omitempty" maxLength:"500"`
	Operator     string   `json:"operator,omitempty" maxLength:"200" doc:"Who runs the agent"`
	Capabilities []string `json:"capabilities,omitempty" maxItems:"16"`
	_            struct{} `additionalProperties:"false"`
}

// HandshakeInput is a handshake request.
type HandshakeInput struct {
	Authorization string       `header:"Authorization" doc:"Refused: the handshake accepts no credentials"`
	Body          *Declaration `required:"false"`
}

// Orientation is what the handshake tells an agent.
type Orientation struct {
	Service          string   `json:"service"`
	Rules            []string `json:"rules"`
	Start            []string `json:"start" doc:"Where to begin"`
	DeclarationValid *bool    `json:"declaration_valid,omitempty" doc:"Set when a declaration was sent; it is not stored and not echoed"`
	TokenIssued      bool     `json:"token_issued"`
	Registered       bool     `json:"registered"`
	Fresh
}

// handshakeBodyLimit bounds a declaration.
const handshakeBodyLimit = 4 << 10

func (d *definition) registerV1() {
	s := d.s
	get(d.v1, "/api/v1", "api-root", "API root: the evaluate, govern, certify and verify workflows", v1Tags,
		func(context.Context) (APIRoot, error) {
			root := APIRoot{API: "verification", Version: "v1", OpenAPI: s.site.APIURL + "/api/v1/openapi.json",
				Handshake: s.site.APIURL + "/api/v1/handshake", Fresh: fresh()}
			for _, w := range []Workflow{
				{"evaluate", "/api/v1/evaluate", "entropy analysis, 52-pattern precheck, AI scan, an explanation for every flag", false},
				{"govern", "/api/v1/govern", "analysis of a prompt and response with a suggested rewrite", false},
				{"certify", "/api/v1/certify", "signed attestation preview, chain_anchor null; anchored issuance only through the gate (CERT_ANCHOR)", false},
				{"verify", "/api/v1/verify", "verify a certificate against the ledger: chain evidence for an anchored one, verified false otherwise", false},
			} {
				w.Available = d.serves(w.Path)
				root.Workflows = append(root.Workflows, w)
			}
			return root, nil
		})

	handshake := func(_ context.Context, in *HandshakeInput) (*reply[Orientation], error) {
		if in.Authorization != "" {
			return nil, problem(http.StatusBadRequest, "credentials-not-accepted", "the handshake accepts no credentials and issues no token; send no Authorization header")
		}
		o := s.orientation()
		if in.Body != nil {
			valid := true // huma validated it against the schema before this call
			o.DeclarationValid = &valid
		}
		return &reply[Orientation]{Body: o}, nil
	}
	huma.Register(d.v1, huma.Operation{OperationID: "handshake-get", Method: http.MethodGet, Path: "/api/v1/handshake",
		Summary: "Orientation for agents", Tags: v1Tags}, func(ctx context.Context, _ *struct{}) (*reply[Orientation], error) {
		return &reply[Orientation]{Body: s.orientation()}, nil
	})
	Post(d.v1, huma.Operation{OperationID: "handshake-post", Path: "/api/v1/handshake",
		Summary: "Orientation, with an optional bounded declaration that is validated but neither stored nor echoed", Tags: v1Tags},
		PostRoute{MaxBodyBytes: handshakeBodyLimit}, handshake)

	get(d.v1, "/api/chain/latest", "chain-latest", "Latest public chain state", v1Tags,
		func(ctx context.Context) (LatestState, error) { return s.latestState(ctx) })

	d.v1.OpenAPI().AddOperation(&huma.Operation{OperationID: "openapi-v1", Method: http.MethodGet, Path: "/api/v1/openapi.json",
		Summary: "This description (OpenAPI 3.1)", Tags: v1Tags,
		Responses: map[string]*huma.Response{"200": {Description: "The canonical OpenAPI description", Content: map[string]*huma.MediaType{"application/json": {}}}}})
	doc := &documentOnce{api: d.v1}
	d.app.Get("/api/v1/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "application/json")
		return c.Send(doc.bytes())
	})
}

func (s *Server) orientation() Orientation {
	return Orientation{
		Service: s.site.Title,
		Rules: []string{
			"No credentials are accepted and no token is issued.",
			"No private memory or context is given to public routes; nothing in a request's session context is authority.",
			"A declaration may be validated; it is neither stored nor echoed. Nothing registers you.",
			"Only the Bridge authorizes consequential actions, through the gate.",
		},
		Start: []string{s.site.BaseURL + "/llms.txt", s.site.BaseURL + "/api/discover", s.site.BaseURL + "/api/ledger/verify", s.site.APIURL + "/api/v1/openapi.json"},
		Fresh: fresh(),
	}
}
