package live

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/live/mcp"
	"github.com/valyala/fasthttp"
)

var mcpTags = []string{"MCP"}

// mcpBodyLimit bounds an MCP request body, in the pipeline and in the
// surface's own guard.
const mcpBodyLimit = mcp.DefaultMaxBodyBytes

// registerMCP mounts the read-only MCP surface (live/mcp): POST /mcp and
// /api/mcp, and its manifest and tool list. Its tools answer from the
// functions of the proof routes (mcpSource) and describe their output with
// the schemas this description publishes for those routes.
//
// The endpoints are behind the request pipeline (postHandler): timeouts,
// the body limit before the body is read, Expect handling, strict JSON,
// and the headers every response carries. They differ from other POST
// routes in two ways: every refusal is a JSON-RPC error (mcpRefusal), and
// they are not rate limited: MCP requests are reads, as GET routes are.
//
// A definition that only describes the edge (Describe, Documents) needs the
// routes, not the server: it makes the check of the site's URLs that
// mcp.New makes and registers the same routes, whose handlers it never
// runs (TestDescribeAsServed).
func (d *definition) registerMCP() {
	s := d.s
	opts := mcp.Options{BaseURL: s.site.BaseURL, APIURL: s.site.APIURL, Version: s.opts.Version, Logger: s.log, MaxBodyBytes: mcpBodyLimit}
	var (
		srv *mcp.Server
		err error
	)
	if s.describing {
		err = mcp.CheckOptions(opts)
	} else {
		opts.Schemas = d.mcpSchemas()
		srv, err = mcp.New(mcpSource{d}, opts)
	}
	if err != nil {
		// Only unusable site URLs get here; without the surface, discovery
		// says so (features.mcp is false).
		if s.log != nil {
			s.log.Error("the MCP surface is not served", "err", err)
		}
		return
	}
	for _, path := range []string{mcp.Endpoint, mcp.APIEndpoint} {
		d.postHandler(d.proof, mcpOperation(path), PostRoute{Unlimited: true, MaxBodyBytes: mcpBodyLimit}, srv.Serve, mcpRefusal)
	}
	get(d.proof, mcp.ManifestPath, "mcp-manifest", "MCP manifest: transport, protocol version, tools, and the no-authority statement", mcpTags,
		func(context.Context) (mcp.Manifest, error) { return srv.Manifest(time.Now()), nil })
	get(d.proof, mcp.ToolsPath, "mcp-tools", "MCP tools exactly as tools/list answers them; each answers tools/call", mcpTags,
		func(context.Context) (mcp.ToolList, error) { return srv.ToolList(time.Now()), nil })
}

// mcpRefusal writes a refusal of the pipeline or the server on an MCP
// endpoint as the surface writes its own: a JSON-RPC error in
// application/json, never problem JSON. A body that is not JSON is a parse
// error (-32700), a failure an internal error (-32603), anything else an
// invalid request (-32600).
func mcpRefusal(ctx *fasthttp.RequestCtx, p *huma.ErrorModel) {
	code, msg := mcp.CodeInvalidRequest, cmp.Or(p.Detail, http.StatusText(p.Status))
	switch slug := strings.TrimPrefix(p.Type, ProblemTypeBase); {
	case p.Status >= 500 && p.Status != http.StatusNotImplemented:
		code = mcp.CodeInternalError
	case slug == "malformed-json" || slug == "invalid-utf8" || slug == "trailing-data":
		code = mcp.CodeParseError
	case p.Status == http.StatusMethodNotAllowed:
		msg = "the MCP endpoint accepts POST only: protocol " + mcp.ProtocolVersion + " has no GET stream and no sessions"
	}
	mcp.WriteError(ctx, p.Status, code, msg)
}

// mcpOperation documents one MCP endpoint.
func mcpOperation(path string) huma.Operation {
	jsonrpc := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: "object",
			Description: "A JSON-RPC 2.0 response: result, or error with code and message"}}}}
	}
	return huma.Operation{
		OperationID: "mcp" + strings.ReplaceAll(path, "/", "-"), Method: http.MethodPost, Path: path, Tags: mcpTags,
		Summary: "Read-only MCP surface (protocol " + mcp.ProtocolVersion + ", stateless Streamable HTTP, JSON responses)",
		Description: "One JSON-RPC 2.0 request per POST, one JSON object back; no initialize handshake, no session. Methods: " +
			strings.Join(mcp.Methods, ", ") + ": tools/call calls any of the six read-only tools that tools/list names (" + mcp.ToolsPath + "). " +
			"Headers: Content-Type: application/json; Accept allowing application/json; " + mcp.HeaderProtocolVersion + ": " + mcp.ProtocolVersion +
			", equal to params._meta[\"io.modelcontextprotocol/protocolVersion\"]; " + mcp.HeaderMethod + " equal to the method; " + mcp.HeaderName +
			" equal to params.name for tools/call. params._meta also carries io.modelcontextprotocol/clientInfo (name, version) and " +
			"io.modelcontextprotocol/clientCapabilities. Every error is a JSON-RPC error in application/json. " + mcp.Authority,
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
			Type: "object", Required: []string{"jsonrpc", "id", "method", "params"}, AdditionalProperties: false,
			Properties: map[string]*huma.Schema{
				"jsonrpc": {Type: "string", Enum: []any{"2.0"}},
				"id":      {OneOf: []*huma.Schema{{Type: "string"}, {Type: "integer"}}},
				"method":  {Type: "string", Enum: []any{"server/discover", "tools/list", "tools/call"}},
				"params":  {Type: "object", Required: []string{"_meta"}, Description: "name and arguments for tools/call, and _meta"},
			}}}}},
		Responses: map[string]*huma.Response{
			"200": jsonrpc("The JSON-RPC result (a tool's failure is a result with isError true)"),
			"400": jsonrpc("Malformed request, batch, notification, invalid params (-32602), header mismatch (-32020) or unsupported protocol version (-32022, with the supported list)"),
			"403": jsonrpc("Origin or Host not allowed"),
			"404": jsonrpc("Method not found (-32601)"),
			"405": jsonrpc("Not POST (Allow: POST)"),
			"406": jsonrpc("Accept does not allow application/json"),
			"408": jsonrpc("The request did not arrive in time"),
			"413": jsonrpc("Body too large"),
			"415": jsonrpc("Content-Type is not application/json"),
			"500": jsonrpc("The server failed (-32603); nothing internal is shown"),
		},
	}
}

// mcpSchemas are the published schemas of the documents the tools return,
// made self-contained: the route's schema with the components it refers to
// as $defs.
//
// huma cannot say that a pointer to a struct may be null (it refers to the
// struct's schema alone), so a document with such a null field would fail
// its own schema; here those properties accept null too.
func (d *definition) mcpSchemas() map[string][]byte {
	registry := d.proof.OpenAPI().Components.Schemas
	components := map[string]json.RawMessage{}
	for name, schema := range registry.Map() {
		var doc map[string]any
		raw, err := json.Marshal(schema)
		if err != nil || json.Unmarshal(raw, &doc) != nil {
			continue // left out: its tool describes an object instead
		}
		props, _ := doc["properties"].(map[string]any)
		for _, field := range nullableRefs(registry.TypeFromRef("#/components/schemas/" + name)) {
			if p, ok := props[field].(map[string]any); ok && p["$ref"] != nil {
				props[field] = map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
			}
		}
		raw, _ = json.Marshal(doc)
		components[name] = bytes.ReplaceAll(raw, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	}
	out := map[string][]byte{}
	for _, route := range []string{mcp.VerdictRoute, mcp.ChainStatusRoute, mcp.StrictTableRoute, mcp.ConstitutionRoute, mcp.NodesRoute, mcp.DiscoveryRoute} {
		item := d.proof.OpenAPI().Paths[route]
		if item == nil || item.Get == nil || item.Get.Responses["200"] == nil {
			continue
		}
		ref := item.Get.Responses["200"].Content["application/json"].Schema.Ref
		root := strings.TrimPrefix(ref, "#/components/schemas/")
		var schema map[string]any
		if json.Unmarshal(components[root], &schema) != nil {
			continue
		}
		defs := map[string]json.RawMessage{}
		var walk func(raw json.RawMessage)
		walk = func(raw json.RawMessage) {
			for _, name := range refsIn(raw) {
				if _, ok := defs[name]; !ok && components[name] != nil {
					defs[name] = components[name]
					walk(components[name])
				}
			}
		}
		walk(components[root])
		if len(defs) > 0 {
			schema["$defs"] = defs
		}
		out[route], _ = json.Marshal(schema)
	}
	return out
}

// nullableRefs returns the JSON names of t's fields, embedded structs
// included, that point to a struct: null when the pointer is nil.
func nullableRefs(t reflect.Type) []string {
	var names []string
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && !f.Anonymous && name != "-" && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
		}
	}
	return names
}

// refsIn returns the names of the $defs a schema refers to.
func refsIn(raw json.RawMessage) []string {
	var names []string
	for rest := string(raw); ; {
		_, after, ok := strings.Cut(rest, `"$ref":"#/$defs/`)
		if !ok {
			return names
		}
		name, tail, _ := strings.Cut(after, `"`)
		names, rest = append(names, name), tail
	}
}

// mcpSource answers the tools from the proof routes' own functions, with
// the bytes those routes write.
type mcpSource struct{ d *definition }

var _ mcp.Source = mcpSource{}

func (m mcpSource) Verdict(context.Context) (json.RawMessage, error) {
	return m.encode(m.d.s.verdict())
}

func (m mcpSource) ChainStatus(context.Context) (json.RawMessage, error) {
	return m.encode(m.d.s.chainStatus(), nil)
}

func (m mcpSource) StrictTable(ctx context.Context) (json.RawMessage, error) {
	r, err := m.d.s.strictTable(ctx)
	if err != nil {
		return m.encode(nil, err)
	}
	return m.encode(r.Body, nil)
}

func (m mcpSource) Constitution(context.Context) (json.RawMessage, error) {
	return m.encode(m.d.s.constitutionArtifact(), nil)
}

func (m mcpSource) Nodes(context.Context) (json.RawMessage, error) {
	return m.encode(m.d.s.nodeList(m.d.serves), nil)
}

func (m mcpSource) Discovery(context.Context) (json.RawMessage, error) {
	return m.encode(m.d.s.discovery(m.d), nil)
}

// encode writes a route's document as the route would, or turns its error
// into one a caller may read: a problem's detail, never internals.
func (m mcpSource) encode(v any, err error) (json.RawMessage, error) {
	if err == nil {
		var b bytes.Buffer
		if err = jsonFormat.Marshal(&b, v); err == nil {
			return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
		}
	}
	if p := (*huma.ErrorModel)(nil); errors.As(err, &p) && (p.Status < 500 || p == errNotVerified) {
		return nil, errors.New(p.Detail)
	}
	m.d.s.log.Error("an MCP tool failed", "err", err)
	return nil, errors.New("the live edge could not read the chain; retry in a moment")
}
