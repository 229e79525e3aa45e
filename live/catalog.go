package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// staticSurface is a published file the live edge serves from the build and
// documents beside its routes.
type staticSurface struct {
	Path, ContentType, Summary, Tag string
}

// staticSurfaces are the build's public surfaces named by the specification.
var staticSurfaces = []staticSurface{
	{"/openapi.json", "application/json", "This description of the proof surface and gate discovery", "Proof surface"},
	{"/docs/AUDITOR_VERIFY_SERVICE_YOURSELF.md", "text/markdown", "How to verify this service yourself, and the downloadable verifier (CC0)", "Proof surface"},
	{"/downloads/verify-ledger.go", "text/plain", "The standalone verifier: one Go file, standard library only (CC0)", "Proof surface"},
	{"/stewardship-horizon.json", "application/json", "Readiness map of the four closure layers", "Proof surface"},
	{"/constitution-status.json", "application/json", "Constitution version, text SHA-256 and the article count of every surface", "Discovery"},
	{"/constitution.txt", "text/plain", "The published constitution, full text", "Discovery"},
	{"/gate.html", "text/html", "The gate: authorization model, capability board, real today versus roadmap", "Gate discovery"},
	{"/products/gate/README.md", "text/markdown", "Public gate kit (CC0)", "Gate discovery"},
	{"/products/gate/PRODUCT_SHEET.md", "text/markdown", "Gate buyer one-pager (CC0)", "Gate discovery"},
	{"/products/gate/demo_output.txt", "text/plain", "Demo transcript: deny by default, allow with Bridge authorization, tamper rejection, capability board", "Gate discovery"},
	{"/llms.txt", "text/plain", "AI-facing entry point and system map", "Discovery"},
	{"/.well-known/ai.json", "application/json", "Machine-readable discovery manifest", "Discovery"},
}

// registerStatic describes the static surfaces in /openapi.json. They are
// served by the static site, not by a route of their own.
func (d *definition) registerStatic() {
	for _, sf := range staticSurfaces {
		content := map[string]*huma.MediaType{sf.ContentType: {}}
		if strings.HasPrefix(sf.ContentType, "text/markdown") {
			content["text/plain"] = &huma.MediaType{} // also offered as plain text
		}
		d.proof.OpenAPI().AddOperation(&huma.Operation{
			OperationID: "static" + strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(strings.ToLower(sf.Path)),
			Method:      http.MethodGet, Path: sf.Path, Summary: sf.Summary, Tags: []string{sf.Tag, "Static"},
			Responses: map[string]*huma.Response{
				"200": {Description: "The published file, with an ETag", Content: content},
				"304": {Description: "Not modified (If-None-Match)"},
			},
		})
	}
}

// Endpoint is one entry of the endpoint catalog.
type Endpoint struct {
	Method  string   `json:"method"`
	Path    string   `json:"path"`
	URL     string   `json:"url"`
	Summary string   `json:"summary"`
	Tags    []string `json:"tags"`
	Kind    string   `json:"kind" enum:"live,static"`
	OnAPI   bool     `json:"api_origin" doc:"Served from the verification API origin"`
}

// Catalog lists every documented endpoint of both descriptions, live routes
// and static surfaces, in path order.
func (d *definition) catalog() []Endpoint {
	var out []Endpoint
	add := func(api huma.API, origin string, onAPI bool) {
		if api == nil {
			return
		}
		for path, item := range api.OpenAPI().Paths {
			for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
				if op == nil {
					continue
				}
				kind := "live"
				if slices.Contains(op.Tags, "Static") {
					kind = "static"
				}
				out = append(out, Endpoint{Method: op.Method, Path: path, URL: origin + path, Summary: op.Summary,
					Tags: slices.DeleteFunc(slices.Clone(op.Tags), func(t string) bool { return t == "Static" }), Kind: kind, OnAPI: onAPI})
			}
		}
	}
	add(d.proof, d.s.site.BaseURL, false)
	add(d.v1, d.s.site.APIURL, true)
	slices.SortFunc(out, func(a, b Endpoint) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// Endpoints returns the endpoint catalog of the live edge for site, for
// llms.txt and other lists built outside a running server.
func Endpoints(site Site) []Endpoint {
	s := &Server{site: &site, describing: true}
	return s.define(newApp(nil), false).catalog()
}

// Description is what a build publishes of the live edge defined for a
// site: the proof surface's OpenAPI description (Documents' proof), the
// endpoint catalogue (Endpoints) and which paths it answers (Answers).
type Description struct {
	OpenAPI   []byte
	Endpoints []Endpoint
	Answers   func(path string) bool
}

// Describe defines the live edge for site once and returns its
// Description: Documents, Endpoints and Answers each define it again, and
// a definition is a large part of a small site's build.
func Describe(site Site) (Description, error) {
	s := &Server{site: &site, describing: true}
	d := s.define(newApp(nil), false)
	proof, err := json.MarshalIndent(d.proof.OpenAPI(), "", "  ")
	if err != nil {
		return Description{}, fmt.Errorf("live: %w", err)
	}
	return Description{OpenAPI: append(proof, '\n'), Endpoints: d.catalog(), Answers: d.served.serves}, nil
}

// Answers returns whether the live edge defined for site answers a path,
// concrete (/api/v1/towns/case) or a template (/api/node/{id}): what the
// build publishes as live is derived from it, as the live edge derives its
// own statements. Like serve, it answers the AI routes.
func Answers(site Site) func(path string) bool {
	s := &Server{site: &site, describing: true}
	return s.define(newApp(nil), false).serves
}
