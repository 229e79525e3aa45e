package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Source is what the tools read: the live edge, answering from the same
// functions as its HTTP routes. Each method returns the JSON document the
// named GET route writes at that moment, generated_at included, or an error
// whose message may be shown to the caller. It has read methods only: the
// surface can reach nothing else (see Authority).
type Source interface {
	// Verdict is the document of GET /api/ledger/verify.
	Verdict(context.Context) (json.RawMessage, error)
	// ChainStatus is the document of GET /api/chain/status, with the
	// signed checkpoint when the chain has one.
	ChainStatus(context.Context) (json.RawMessage, error)
	// StrictTable is the document of GET /api/ledger/strict-table.
	StrictTable(context.Context) (json.RawMessage, error)
	// Constitution is the document of GET /api/constitution.
	Constitution(context.Context) (json.RawMessage, error)
	// Nodes is the document of GET /api/nodes.
	Nodes(context.Context) (json.RawMessage, error)
	// Discovery is the document of GET /api/discover.
	Discovery(context.Context) (json.RawMessage, error)
}

// Routes whose documents the tools return.
const (
	VerdictRoute      = "/api/ledger/verify"
	ChainStatusRoute  = "/api/chain/status"
	StrictTableRoute  = "/api/ledger/strict-table"
	ConstitutionRoute = "/api/constitution"
	NodesRoute        = "/api/nodes"
	DiscoveryRoute    = "/api/discover"
)

// Bounds of the tools' inputs.
const (
	// MaxPage is the most strict-table rows one call returns.
	MaxPage = 100
	// DefaultPage is the page size when a call names none.
	DefaultPage = 50
	// MaxQuery bounds a constitution search, in bytes.
	MaxQuery = 200
	// MaxMatches is the most articles one search returns.
	MaxMatches = 10
)

// readOnly are the annotations of every tool: reads of a closed world that
// change nothing, however often they are repeated.
func readOnly(title string) *sdk.ToolAnnotations {
	f := false
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f}
}

// NoInput is the input of the tools that take none: an empty object.
type NoInput struct{}

// RowsInput selects a page of the strict table.
type RowsInput struct {
	From  int64 `json:"from,omitempty" jsonschema:"Index of the first row (0 is the genesis block)."`
	Limit int   `json:"limit,omitempty" jsonschema:"Rows in the page, at most 100."`
}

// TableRows is one page of the strict table, with the table's verdict.
type TableRows struct {
	OK                      bool              `json:"ok" jsonschema:"The verdict passes: the canonical spine is valid and every strict-table break is documented."`
	CanonicalSpineValid     *bool             `json:"canonical_spine_valid" jsonschema:"The authoritative chain-integrity field."`
	StrictTableValid        *bool             `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64            `json:"strict_table_break_at_block"`
	Verdict                 string            `json:"verdict"`
	MetadataOnly            bool              `json:"metadata_only" jsonschema:"Always true: descriptions and payload preimages are never published."`
	Breaks                  []json.RawMessage `json:"breaks"`
	DocumentedSeams         []json.RawMessage `json:"documented_seams"`
	OffSpineRows            []int64           `json:"off_spine_rows"`
	RowCount                int64             `json:"row_count" jsonschema:"Rows in the whole table."`
	From                    int64             `json:"from"`
	NextFrom                *int64            `json:"next_from" jsonschema:"The from of the next page; null after the last row."`
	Rows                    []json.RawMessage `json:"rows" jsonschema:"Rows from..from+limit-1, each exactly as GET /api/ledger/strict-table serves it."`
	GeneratedAt             string            `json:"generated_at"`
	Route                   string            `json:"route" jsonschema:"The HTTP route this page is cut from."`
}

// ArticleInput asks for an article by number or searches the articles.
type ArticleInput struct {
	Number int    `json:"number,omitempty" jsonschema:"An article number; give this or query."`
	Query  string `json:"query,omitempty" jsonschema:"Words that must all appear in an article's title, text or tags (case-insensitive); give this or number."`
}

// Article is one article of the runtime constitution.
type Article struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Text   string   `json:"text"`
	Tags   []string `json:"tags"`
}

// Articles answers constitution_article.
type Articles struct {
	RuntimeVersion       string    `json:"runtime_version" jsonschema:"Version of the runtime artifact the articles come from."`
	PublishedTextVersion string    `json:"published_text_version" jsonschema:"The published text governs wherever the two differ."`
	ArticleCount         int       `json:"article_count"`
	License              string    `json:"license"`
	ArtifactSHA256       string    `json:"artifact_sha256" jsonschema:"SHA-256 of the artifact exactly as GET /api/constitution publishes it."`
	Matches              int       `json:"matches" jsonschema:"Articles that matched; at most 10 are returned."`
	Articles             []Article `json:"articles"`
	GeneratedAt          string    `json:"generated_at"`
	Route                string    `json:"route"`
}

// toolDef is one tool: its definition and the handler that answers it.
type toolDef struct {
	tool *sdk.Tool
	add  func(*sdk.Server, *sdk.Tool)
}

// addTools defines the six tools on srv and returns their definitions in
// the order tools/list answers them, by name, and the tools that return a
// Source document as it is, for the fast path.
func addTools(srv *sdk.Server, impl *sdk.Implementation, src Source, schemas map[string][]byte) ([]*sdk.Tool, map[string]*docTool, error) {
	var errs []error
	docs := map[string]*docTool{}
	doc := func(name, title, route, description string, read func(context.Context) (json.RawMessage, error)) toolDef {
		out, err := documentSchema(schemas[route])
		if err == nil {
			docs[name], err = newDocTool(read, out, impl)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: schema of %s: %w", route, err))
		}
		t := &sdk.Tool{Name: name, Title: title, Annotations: readOnly(title),
			Description: description + " The same document as GET " + route + ".",
			InputSchema: mustSchema[NoInput](nil), OutputSchema: out}
		return toolDef{t, func(s *sdk.Server, t *sdk.Tool) {
			sdk.AddTool(s, t, func(ctx context.Context, _ *sdk.CallToolRequest, _ NoInput) (*sdk.CallToolResult, json.RawMessage, error) {
				d, err := read(ctx)
				return nil, d, err
			})
		}}
	}
	rows := &sdk.Tool{Name: "strict_table_rows", Title: "Strict-table rows", Annotations: readOnly("Strict-table rows"),
		Description: fmt.Sprintf("A page of the strict table: rows by index from `from`, at most %d per call (default %d), "+
			"public metadata only, with the table's verdict and breaks. Cut from GET %s.", MaxPage, DefaultPage, StrictTableRoute),
		InputSchema: mustSchema[RowsInput](func(s *jsonschema.Schema) {
			s.Properties["from"].Minimum, s.Properties["from"].Default = ptr(0.0), json.RawMessage("0")
			s.Properties["limit"].Minimum, s.Properties["limit"].Maximum = ptr(1.0), ptr(float64(MaxPage))
			s.Properties["limit"].Default = json.RawMessage(fmt.Sprint(DefaultPage))
		}),
		OutputSchema: mustSchema[TableRows](nil)}
	articles := &sdk.Tool{Name: "constitution_article", Title: "Constitution article", Annotations: readOnly("Constitution article"),
		Description: fmt.Sprintf("An article of the constitution's runtime artifact by number, or the articles whose title, text or tags "+
			"contain every word of a query (at most %d). Read from GET %s; the published text governs where they differ.", MaxMatches, ConstitutionRoute),
		InputSchema: mustSchema[ArticleInput](func(s *jsonschema.Schema) {
			s.Properties["number"].Minimum, s.Properties["number"].Maximum = ptr(1.0), ptr(1000.0)
			s.Properties["query"].MaxLength = ptr(MaxQuery)
		}),
		OutputSchema: mustSchema[Articles](nil)}
	defs := []toolDef{
		doc("ledger_verdict", "Ledger verdict", VerdictRoute,
			"The served ledger verdict: canonical_spine_valid (authoritative), the strict-table result and its documented seams, the signed checkpoint, at request time.", src.Verdict),
		doc("chain_status", "Chain status", ChainStatusRoute,
			"Where the chain stands: head, genesis, block count, the published writer and witness keys to pin, and the signed checkpoint to keep.", src.ChainStatus),
		{rows, func(s *sdk.Server, t *sdk.Tool) {
			sdk.AddTool(s, t, func(ctx context.Context, _ *sdk.CallToolRequest, in RowsInput) (*sdk.CallToolResult, TableRows, error) {
				page, err := tableRows(ctx, src, in)
				return nil, page, err
			})
		}},
		{articles, func(s *sdk.Server, t *sdk.Tool) {
			sdk.AddTool(s, t, func(ctx context.Context, _ *sdk.CallToolRequest, in ArticleInput) (*sdk.CallToolResult, Articles, error) {
				a, err := findArticles(ctx, src, in)
				return nil, a, err
			})
		}},
		doc("node_roster", "Node roster", NodesRoute,
			"The public node roster and the human authorization boundary: who may advise and who alone authorizes.", src.Nodes),
		doc("endpoint_catalog", "Endpoint catalog", DiscoveryRoute,
			"The master index: every endpoint of both API descriptions and every static surface, the town map, the products and the feature flags.", src.Discovery),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	tools := make([]*sdk.Tool, len(defs))
	for i, d := range defs {
		d.add(srv, d.tool)
		tools[i] = d.tool
	}
	// tools/list answers in name order.
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, docs, nil
}

// documentSchema decodes a route's published schema, or describes a JSON
// object when there is none.
func documentSchema(raw []byte) (*jsonschema.Schema, error) {
	if raw == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, err
	}
	return &s, nil
}

// anyObject describes the free-form objects of the strict table (rows,
// breaks, seams): their fields are the HTTP route's to describe.
var anyObject = map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {Type: "object"}}

// mustSchema infers the schema of T and lets edit add the bounds struct
// tags cannot say. T is one of this file's types, so inference cannot fail.
func mustSchema[T any](edit func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: anyObject})
	if err != nil {
		panic(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// read decodes the fields of a Source document that a tool needs.
func read[T any](ctx context.Context, document func(context.Context) (json.RawMessage, error), what string) (T, error) {
	var v T
	raw, err := document(ctx)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("mcp: reading %s: %w", what, err)
	}
	return v, nil
}

// tableRows cuts one page out of the strict table; the input schema has
// given from and limit their defaults and bounds.
func tableRows(ctx context.Context, src Source, in RowsInput) (TableRows, error) {
	t, err := read[TableRows](ctx, src.StrictTable, "the strict table")
	if err != nil {
		return TableRows{}, err
	}
	all := t.Rows
	t.RowCount, t.From, t.Route, t.NextFrom = int64(len(all)), in.From, StrictTableRoute, nil
	end := min(in.From+int64(in.Limit), t.RowCount)
	t.Rows = []json.RawMessage{}
	if in.From < end {
		t.Rows = all[in.From:end]
	}
	if end < t.RowCount {
		t.NextFrom = &end
	}
	return t, nil
}

// artifactDocument is what constitution_article reads of GET
// /api/constitution.
type artifactDocument struct {
	Version              string `json:"version"`
	PublishedTextVersion string `json:"published_text_version"`
	Articles             int    `json:"articles"`
	License              string `json:"license"`
	SHA256               string `json:"sha256"`
	Artifact             struct {
		Articles []Article `json:"articles"`
	} `json:"artifact"`
	GeneratedAt string `json:"generated_at"`
}

// findArticles answers constitution_article.
func findArticles(ctx context.Context, src Source, in ArticleInput) (Articles, error) {
	query := strings.Fields(strings.ToLower(in.Query))
	if (in.Number == 0) == (len(query) == 0) {
		return Articles{}, errors.New("give either number (an article number) or query (words to search for), not both")
	}
	doc, err := read[artifactDocument](ctx, src.Constitution, "the constitution")
	if err != nil {
		return Articles{}, err
	}
	a := Articles{RuntimeVersion: doc.Version, PublishedTextVersion: doc.PublishedTextVersion, ArticleCount: len(doc.Artifact.Articles),
		License: doc.License, ArtifactSHA256: doc.SHA256, Articles: []Article{}, GeneratedAt: doc.GeneratedAt, Route: ConstitutionRoute}
	for _, art := range doc.Artifact.Articles {
		if in.Number != 0 && art.Number != in.Number || len(query) > 0 && !matches(art, query) {
			continue
		}
		a.Matches++
		if len(a.Articles) < MaxMatches {
			art.Tags = nonNil(art.Tags)
			a.Articles = append(a.Articles, art)
		}
	}
	if in.Number != 0 && a.Matches == 0 {
		return Articles{}, fmt.Errorf("the runtime artifact %s has no article %d; it has %d articles", doc.Version, in.Number, a.ArticleCount)
	}
	return a, nil
}

// matches reports whether every word appears in the article.
func matches(a Article, words []string) bool {
	text := strings.ToLower(a.Title + "\n" + a.Text + "\n" + strings.Join(a.Tags, " "))
	return !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) })
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
