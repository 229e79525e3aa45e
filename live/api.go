package live

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
)

// Versions of the two API descriptions.
const (
	// ProofAPIVersion versions /openapi.json: the proof surface and gate
	// discovery.
	ProofAPIVersion = "0.2.0-gate"
	// V1APIVersion versions /api/v1/openapi.json, the verification API on
	// the API origin (worker APIs on a v1.8 compatibility basis).
	V1APIVersion = "1.8.0"
	// ControlPlaneExtension is the key of the capability board in
	// /openapi.json.
	ControlPlaneExtension = "x-capability-control-plane"
)

// Fresh is embedded in every live JSON response.
type Fresh struct {
	GeneratedAt time.Time `json:"generated_at" doc:"When this response was generated: request time, UTC. A stale value is drift."`
}

func fresh() Fresh { return Fresh{GeneratedAt: time.Now().UTC()} }

// reply wraps a response body for huma.
type reply[T any] struct{ Body T }

// apiConfig is huma's default configuration without the per-response
// $schema links and without the documentation UI (which loads scripts from
// a CDN): the descriptions are served as plain JSON. Bodies that carry
// their own encoding are written as they are (jsonFormat).
func apiConfig(title, version, description, server string) huma.Config {
	cfg := huma.DefaultConfig(title, version)
	cfg.CreateHooks = nil
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.Info.Description = description
	cfg.Info.License = &huma.License{Name: "CC0-1.0", Identifier: "CC0-1.0"}
	cfg.Servers = []*huma.Server{{URL: server}}
	return cfg
}

// definition is the one definition of every live route: registering it on
// a fiber app serves the routes and describes them.
type definition struct {
	s     *Server
	app   *fiber.App
	proof huma.API // described in /openapi.json
	v1    huma.API // described in /api/v1/openapi.json

	served *routeTable // every route defined, once finish has run
}

// define registers every route on app. With apiOnly, app is the API origin's
// listener and serves the v1 surface only.
func (s *Server) define(app *fiber.App, apiOnly bool) *definition {
	site := s.site
	d := &definition{s: s, app: app}
	problems := "Errors are RFC 9457 problem documents (application/problem+json) whose type is " +
		ProblemTypeBase + "<slug>: " + strings.Join(sortedSlugs(), ", ") + ". " + requestRules
	v1 := apiConfig(site.Title+" — verification API", V1APIVersion,
		"The verification API on the API origin: orientation for agents, the latest chain state, and the constitutional evaluation routes "+
			"(evaluate, govern, certify previews, certificate verification against the chain, compliance and telemetry). "+problems, site.APIURL)
	d.v1 = d.newAPI(v1)
	d.registerV1()
	d.registerTowns()
	d.registerEval()
	d.registerVerify()
	if !apiOnly {
		proof := apiConfig(site.Title+" — proof surface", ProofAPIVersion,
			"The public proof surface and gate discovery. canonical_spine_valid is the authoritative integrity field; "+
				"every live JSON response carries a request-time generated_at and Cache-Control: no-store. "+problems+mcpRules, site.BaseURL)
		proof.Extensions = map[string]any{ControlPlaneExtension: s.controlPlane()}
		d.proof = d.newAPI(proof)
		d.registerProof()
		d.registerDiscovery()
		d.registerRecords()
		d.registerMemory()
		d.registerStatic()
		d.registerMCP()
	}
	if s.opts.testRoutes != nil {
		s.opts.testRoutes(d)
	}
	d.finish()
	return d
}

// requestRules is what both descriptions say of malformed requests.
const requestRules = "Malformed parameters and bodies are answered 400 (invalid-request, or the rule broken); " +
	"422 is kept for well-formed requests whose content fails a semantic check. " +
	"A query parameter may be given once, in its declared letter case. " +
	"A POST body must be Content-Type: application/json (415), within the operation's x-max-body-bytes (413), " +
	"and strict JSON (400): no member name twice in one object, none that differs only in letter case from a declared field, " +
	"no member the schema does not declare (additionalProperties: false), valid UTF-8 and nothing after the value. " +
	"POST operations are rate-limited per client (x-rate-limit, or 30 per minute) on every listener together: 429 with Retry-After."

// mcpRules is what the proof surface's description says of the MCP
// endpoints, beside requestRules.
const mcpRules = " The MCP endpoints (/mcp and /api/mcp) are the exception: they carry reads, so they are not rate-limited " +
	"(x-rate-limit: false), as GET operations are not, and they answer every error, the rules above included, " +
	"as a JSON-RPC 2.0 error in application/json, never as a problem document."

// newAPI returns a huma API on the definition's app whose every operation
// runs through the request pipeline, and whose GET routes answer HEAD.
func (d *definition) newAPI(cfg huma.Config) huma.API {
	api := humafiber.NewWithGroup(d.app, headRouter{d.app}, cfg)
	api.UseMiddleware(d.pipeline)
	return api
}

// controlPlane is the capability board and enforcement model, as published
// in the OpenAPI extension and the discovery documents.
func (s *Server) controlPlane() map[string]any {
	board := s.site.Board()
	return map[string]any{
		"board":             board,
		"maturity":          board["maturity"],
		"enforcement_model": board["enforcement_model"],
		"publish_rule":      s.site.PublishRule,
	}
}

// get registers a GET operation without input.
func get[T any](api huma.API, path, id, summary string, tags []string, h func(context.Context) (T, error)) {
	huma.Register(api, huma.Operation{OperationID: id, Method: http.MethodGet, Path: path, Summary: summary, Tags: tags},
		func(ctx context.Context, _ *struct{}) (*reply[T], error) {
			body, err := h(ctx)
			if err != nil {
				return nil, err
			}
			return &reply[T]{Body: body}, nil
		})
}

// Documents returns the two OpenAPI descriptions, /openapi.json and
// /api/v1/openapi.json, from the same definition that serves the routes.
// The build publishes the first.
func Documents(site Site) (proof, v1 []byte, err error) {
	s := &Server{site: &site, describing: true}
	d := s.define(newApp(nil), false)
	if proof, err = json.MarshalIndent(d.proof.OpenAPI(), "", "  "); err != nil {
		return nil, nil, fmt.Errorf("live: %w", err)
	}
	if v1, err = json.MarshalIndent(d.v1.OpenAPI(), "", "  "); err != nil {
		return nil, nil, fmt.Errorf("live: %w", err)
	}
	return append(proof, '\n'), append(v1, '\n'), nil
}

// documentOnce marshals an API description once, on first request.
type documentOnce struct {
	once sync.Once
	api  huma.API
	data []byte
}

func (d *documentOnce) bytes() []byte {
	d.once.Do(func() {
		d.data, _ = json.MarshalIndent(d.api.OpenAPI(), "", "  ")
		d.data = append(d.data, '\n')
	})
	return d.data
}

// paths returns every documented path of both descriptions.
func (d *definition) paths() map[string]*huma.PathItem {
	out := map[string]*huma.PathItem{}
	for _, api := range []huma.API{d.v1, d.proof} {
		if api == nil {
			continue
		}
		for p, item := range api.OpenAPI().Paths {
			out[p] = item
		}
	}
	return out
}
