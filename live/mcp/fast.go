package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path. A tools/call of a tool that returns a Source document as
// it is (ledger_verdict, chain_status, node_roster, endpoint_catalog), with
// no arguments, is answered here instead of by the SDK: go-sdk v1.8.0
// builds a session with goroutines for every stateless request and decodes
// the message some twenty times, which made such a call cost a hundred
// times the document's own route.
//
// The answer is the SDK's, byte for byte: what the SDK does to a tool's
// output is done here with the same libraries (decode into a map, apply
// the output schema's defaults, validate, encode with encoding/json, which
// sorts the keys), and the result is put in the SDK's own CallToolResult.
// That work is done once per version of the document: the document minus
// its request-time generated_at is the version. The answer of a version is
// kept as three pieces around the two places generated_at appears (in the
// text content and in structuredContent), and each request puts its own
// document's generated_at between them. So the output schema is validated
// once per document version, here, and on every call in the SDK; the tests
// validate every tool's output against its schema, and hold the fast
// path's answers to the SDK's for a table of requests (TestFastPathIsTheSDK).
//
// Anything else goes to the SDK: another tool, arguments other than an
// empty object, params or _meta members beyond those every request carries,
// a Source error, a document whose generated_at is not its last member, or
// one that fails its schema (the SDK then says why).

// docTool is a tool whose result is a Source document as it is.
type docTool struct {
	read   func(context.Context) (json.RawMessage, error)
	output *jsonschema.Resolved
	impl   *sdk.Implementation
	last   atomic.Pointer[docAnswer] // the answer to the last version read
}

// docAnswer is the result of one version of a document, without its
// generated_at: head, generated_at, mid, generated_at, tail.
type docAnswer struct {
	version         []byte // the document up to its generated_at member
	head, mid, tail []byte
	fast            bool // false: the SDK answers this version
}

// generatedAtMember introduces the last member of every Source document.
var generatedAtMember = []byte(`,"generated_at":"`)

// placeholder stands for generated_at while an answer is built; an answer
// in which it does not appear exactly twice is left to the SDK.
const placeholder = "proofsite-mcp-generated-at-placeholder"

// fastTool returns the document tool that answers req on the fast path,
// or nil.
func (s *Server) fastTool(req checked) *docTool {
	t := s.docs[req.name]
	if t == nil || req.method != "tools/call" {
		return nil
	}
	for k := range req.params {
		if k != "name" && k != "_meta" && k != "arguments" {
			return nil
		}
	}
	if args, ok := req.params["arguments"]; ok && !isEmptyObject(args) {
		return nil
	}
	for k := range req.meta {
		if k != metaProtocolVersion && k != metaClientInfo && k != metaClientCapabilities {
			return nil
		}
	}
	return t
}

// answer returns the pieces of the tools/call result around generated_at,
// and generated_at, or ok false when the SDK must answer.
func (t *docTool) answer(ctx context.Context) (a *docAnswer, generatedAt []byte, ok bool) {
	doc, err := t.read(ctx)
	if err != nil {
		return nil, nil, false
	}
	version, generatedAt, ok := cutGeneratedAt(doc)
	if !ok {
		return nil, nil, false
	}
	if a = t.last.Load(); a == nil || !bytes.Equal(a.version, version) {
		a = t.build(doc, version)
		t.last.Store(a)
	}
	return a, generatedAt, a.fast
}

// cutGeneratedAt splits a document ending in "generated_at":"..."} into
// what comes before that member and its value, which must need no escaping
// in a JSON string, inside another or not (an RFC 3339 time does not).
func cutGeneratedAt(doc []byte) (version, generatedAt []byte, ok bool) {
	i := bytes.LastIndex(doc, generatedAtMember)
	if i < 0 {
		return nil, nil, false
	}
	value, ok := bytes.CutSuffix(doc[i+len(generatedAtMember):], []byte(`"}`))
	if !ok || len(value) == 0 || bytes.ContainsFunc(value, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || r == ':' || r == '.' || r == '-' || r == '+')
	}) {
		return nil, nil, false
	}
	return doc[:i], value, true
}

// build makes the answer to one version of the document: the SDK's steps
// for a tool's output (see above), the output schema validated once, here.
func (t *docTool) build(doc, version []byte) *docAnswer {
	a := &docAnswer{version: bytes.Clone(version)}
	var out any
	if json.Unmarshal(doc, &out) != nil {
		return a
	}
	m, ok := out.(map[string]any)
	if !ok || t.output.ApplyDefaults(&out) != nil || t.output.Validate(&out) != nil {
		return a
	}
	m["generated_at"] = placeholder
	structured, err := json.Marshal(m)
	if err != nil {
		return a
	}
	res := &sdk.CallToolResult{
		Meta:              sdk.Meta{sdk.MetaKeyServerInfo: t.impl},
		Content:           []sdk.Content{&sdk.TextContent{Text: string(structured)}},
		StructuredContent: json.RawMessage(structured),
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return a
	}
	// The SDK marks a result it completes: resultType comes last.
	raw = append(raw[:len(raw)-1], `,"resultType":"complete"}`...)
	if parts := bytes.Split(raw, []byte(placeholder)); len(parts) == 3 {
		a.head, a.mid, a.tail, a.fast = parts[0], parts[1], parts[2], true
	}
	return a
}

// isEmptyObject reports whether raw is {} with any whitespace inside.
func isEmptyObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && raw[len(raw)-1] == '}' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// newDocTool resolves the output schema as the SDK does.
func newDocTool(read func(context.Context) (json.RawMessage, error), output *jsonschema.Schema, impl *sdk.Implementation) (*docTool, error) {
	r, err := output.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("mcp: output schema: %w", err)
	}
	return &docTool{read: read, output: r, impl: impl}, nil
}
