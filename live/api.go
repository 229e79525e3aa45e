package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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

// ProblemTypeBase prefixes every problem "type": stable identifiers that do
// not depend on where the service runs.
const ProblemTypeBase = "urn:proofsite:problem:"

// problemSlugs name the problem type of each status.
var problemSlugs = map[int]string{
	http.StatusBadRequest:            "bad-request",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not-found",
	http.StatusMethodNotAllowed:      "method-not-allowed",
	http.StatusNotAcceptable:         "not-acceptable",
	http.StatusRequestEntityTooLarge: "body-too-large",
	http.StatusUnsupportedMediaType:  "unsupported-media-type",
	http.StatusUnprocessableEntity:   "invalid-request",
	http.StatusTooManyRequests:       "rate-limited",
	http.StatusServiceUnavailable:    "unavailable",
}

func problemType(status int) string {
	if slug, ok := problemSlugs[status]; ok {
		return ProblemTypeBase + slug
	}
	if status >= 500 {
		return ProblemTypeBase + "internal"
	}
	return "about:blank"
}

// problem is an RFC 9457 problem with a type of its own.
func problem(status int, slug, detail string) *huma.ErrorModel {
	return &huma.ErrorModel{Type: ProblemTypeBase + slug, Title: http.StatusText(status), Status: status, Detail: detail}
}

// Every error huma produces (validation, body limits, handler errors) is a
// problem with a stable type and the request path as its instance; 5xx
// problems carry no internal detail.
func init() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		if status >= 500 {
			msg, errs = "", nil
		}
		details := make([]*huma.ErrorDetail, 0, len(errs))
		for _, err := range errs {
			var d huma.ErrorDetailer
			if errors.As(err, &d) {
				// Say where and what, never echo the value: some inputs
				// (a handshake declaration) must not come back.
				detail := *d.ErrorDetail()
				detail.Value = nil
				details = append(details, &detail)
			} else if err != nil {
				details = append(details, &huma.ErrorDetail{Message: err.Error()})
			}
		}
		return &huma.ErrorModel{Type: problemType(status), Title: http.StatusText(status), Status: status, Detail: msg, Errors: details}
	}
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		err := huma.NewError(status, msg, errs...)
		if m, ok := err.(*huma.ErrorModel); ok && ctx != nil {
			m.Instance = ctx.URL().Path
		}
		return err
	}
}

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
}

// define registers every route on app. With apiOnly, app is the API origin's
// listener and serves the v1 surface only.
func (s *Server) define(app *fiber.App, apiOnly bool) *definition {
	site := s.site
	d := &definition{s: s, app: app}
	problems := "Errors are RFC 9457 problem documents (application/problem+json) whose type is " +
		ProblemTypeBase + "<slug>: " + strings.Join(sortedSlugs(), ", ") + "."
	v1 := apiConfig(site.Title+" — verification API", V1APIVersion,
		"The verification API on the API origin: orientation for agents and the latest chain state. "+problems, site.APIURL)
	d.v1 = humafiber.New(app, v1)
	d.registerV1()
	if apiOnly {
		return d
	}
	proof := apiConfig(site.Title+" — proof surface", ProofAPIVersion,
		"The public proof surface and gate discovery. canonical_spine_valid is the authoritative integrity field; "+
			"every live JSON response carries a request-time generated_at and Cache-Control: no-store. "+problems, site.BaseURL)
	proof.Extensions = map[string]any{ControlPlaneExtension: s.controlPlane()}
	d.proof = humafiber.New(app, proof)
	d.registerProof()
	d.registerDiscovery()
	d.registerRecords()
	d.registerStatic()
	d.registerMCP()
	return d
}

func sortedSlugs() []string {
	var out []string
	for _, s := range problemSlugs {
		out = append(out, s)
	}
	out = append(out, "internal", "metadata-only", "credentials-not-accepted")
	slices.Sort(out)
	return out
}

// controlPlane is the capability board and enforcement model, as published
// in the OpenAPI extension and the discovery documents.
func (s *Server) controlPlane() map[string]any {
	board := s.site.board()
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
	s := &Server{site: &site}
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
