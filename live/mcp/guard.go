package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// The MCP request headers of 2026-07-28.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// JSON-RPC error codes the surface answers with: JSON-RPC 2.0's own and the
// protocol errors of MCP 2026-07-28.
const (
	CodeParseError             int64 = jsonrpc.CodeParseError
	CodeInvalidRequest         int64 = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound         int64 = jsonrpc.CodeMethodNotFound
	CodeInvalidParams          int64 = jsonrpc.CodeInvalidParams
	CodeInternalError          int64 = jsonrpc.CodeInternalError
	CodeHeaderMismatch         int64 = sdk.CodeHeaderMismatch
	CodeUnsupportedProtocolVer int64 = sdk.CodeUnsupportedProtocolVersion
)

// The _meta keys every request carries.
const (
	metaProtocolVersion    = sdk.MetaKeyProtocolVersion
	metaClientInfo         = sdk.MetaKeyClientInfo
	metaClientCapabilities = sdk.MetaKeyClientCapabilities
)

// rpcError is a refusal: the HTTP status and the JSON-RPC error of the body.
type rpcError struct {
	status  int
	code    int64
	message string
	data    any
}

func refuse(status int, code int64, format string, args ...any) *rpcError {
	return &rpcError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// unsupported names the versions the surface speaks, as every refusal of a
// version (or of a request that names none) does.
type unsupported struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested,omitempty"`
}

// guard holds what the transport rules are checked against.
type guard struct {
	origins map[string]bool // allowed Origin values besides loopback ones
	hosts   map[string]bool // allowed Host names besides loopback ones
	maxBody int
}

func newGuard(opts Options) (guard, error) {
	g := guard{origins: map[string]bool{}, hosts: map[string]bool{}, maxBody: opts.MaxBodyBytes}
	for i, raw := range []string{opts.BaseURL, opts.APIURL} {
		if raw == "" && i > 0 {
			continue
		}
		o, host, err := origin(raw)
		if err != nil {
			return guard{}, err
		}
		g.origins[o], g.hosts[host] = true, true
	}
	return g, nil
}

// checked is a request that passed the guard, re-encoded from the values
// the guard checked so that the SDK cannot read it differently.
type checked struct {
	id json.RawMessage
	// msg, params and meta are the message as checked.
	msg, params, meta map[string]json.RawMessage
	// name is the tools/call tool name its Mcp-Name header carried,
	// decoded: the SDK compares the header without decoding it.
	name string
	// method is the JSON-RPC method; plain says its params hold nothing
	// but _meta, which says who asks and never changes the answer.
	method string
	plain  bool
}

// check applies the transport rules of 2026-07-28 to a request, in the
// order a reader would: HTTP first, then the JSON-RPC message, then the
// headers against the message. id is the request's id once known.
func (g guard) check(c *fiber.Ctx) (req checked, e *rpcError) {
	if c.Method() != fiber.MethodPost {
		c.Set(fiber.HeaderAllow, fiber.MethodPost)
		return req, refuse(http.StatusMethodNotAllowed, CodeInvalidRequest, "the MCP endpoint accepts POST only (protocol %s has no GET stream and no sessions)", ProtocolVersion)
	}
	if e := g.checkOrigin(c); e != nil {
		return req, e
	}
	if ct := c.Request().Header.ContentType(); !isJSON(string(ct)) {
		return req, refuse(http.StatusUnsupportedMediaType, CodeInvalidRequest, "Content-Type must be application/json, not %q", ct)
	}
	if !acceptsJSON(c.Request().Header.PeekAll(fiber.HeaderAccept)) {
		return req, refuse(http.StatusNotAcceptable, CodeInvalidRequest, "Accept must allow application/json: this server answers every request with one JSON object")
	}
	if n := len(c.Body()); n > g.maxBody {
		return req, refuse(http.StatusRequestEntityTooLarge, CodeInvalidRequest, "the request body has %d bytes; the limit is %d", n, g.maxBody)
	}
	msg, e := parseMessage(c.Body())
	if e != nil {
		return req, e
	}
	req.id = responseID(msg["id"])
	params, meta, e := checkHeaders(c, msg)
	if e != nil {
		return req, e
	}
	req.msg, req.params, req.meta = msg, params, meta
	req.method, _ = stringOf(msg["method"])
	req.plain = len(params) == 1
	if req.method == "tools/call" {
		req.name, _ = stringOf(params["name"])
	}
	return req, nil
}

// body encodes the message as checked.
func (req checked) body() []byte {
	req.params["_meta"] = mustMarshal(req.meta)
	req.msg["params"] = mustMarshal(req.params)
	return mustMarshal(req.msg)
}

// checkOrigin refuses browsers of foreign origins (DNS rebinding, cross-site
// calls) and, on a loopback connection, a Host that names neither the site
// nor this machine. The SDK's own Host check needs the connection's local
// address, which fiber's adaptor does not pass on: it would never run.
func (g guard) checkOrigin(c *fiber.Ctx) *rpcError {
	switch origins := c.Request().Header.PeekAll(fiber.HeaderOrigin); len(origins) {
	case 0:
	case 1:
		o := strings.ToLower(string(origins[0]))
		if !g.origins[o] && !isLoopbackOrigin(o) {
			return refuse(http.StatusForbidden, CodeInvalidRequest, "origin %q may not call this server", origins[0])
		}
	default:
		return refuse(http.StatusForbidden, CodeInvalidRequest, "more than one Origin header")
	}
	if local, ok := c.Context().LocalAddr().(*net.TCPAddr); ok && local.IP.IsLoopback() {
		host := string(c.Request().Host())
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host = strings.ToLower(host); !g.hosts[host] && !isLoopbackHost(host) {
			return refuse(http.StatusForbidden, CodeInvalidRequest, "Host %q names neither this site nor this machine", c.Request().Host())
		}
	}
	return nil
}

// parseMessage reads a single JSON-RPC 2.0 request.
func parseMessage(body []byte) (map[string]json.RawMessage, *rpcError) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "batches are not supported: send one JSON-RPC request per POST")
	}
	msg := make(map[string]json.RawMessage, 4) // the decoder would make room for 64
	if err := unmarshal(body, &msg); err != nil {
		var syntax *json.SyntaxError
		if len(body) == 0 || errors.As(err, &syntax) { // its message would quote the body
			return nil, refuse(http.StatusBadRequest, CodeParseError, "the body is not JSON")
		}
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "the body must be one JSON-RPC request object")
	}
	for k := range msg {
		if !slices.Contains([]string{"jsonrpc", "id", "method", "params"}, k) {
			return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "unexpected member %q: a request has jsonrpc, id, method and params only", k)
		}
	}
	if v, _ := stringOf(msg["jsonrpc"]); v != "2.0" {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if _, ok := stringOf(msg["method"]); !ok {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, `"method" must be a string`)
	}
	id, ok := msg["id"]
	if !ok {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "notifications are not accepted: send a request with an id")
	}
	if !validID(id) {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, `"id" must be a string or an integer`)
	}
	return msg, nil
}

// checkHeaders holds the request metadata headers and _meta to the message.
// It returns the request's params and their _meta.
func checkHeaders(c *fiber.Ctx, msg map[string]json.RawMessage) (params, meta map[string]json.RawMessage, e *rpcError) {
	method, _ := stringOf(msg["method"])
	version, e := header(c, HeaderProtocolVersion)
	switch {
	case e != nil:
		return nil, nil, e
	case version == "":
		e := refuse(http.StatusBadRequest, CodeHeaderMismatch, "the %s header is required; this server speaks %s", HeaderProtocolVersion, ProtocolVersion)
		e.data = unsupported{Supported: []string{ProtocolVersion}}
		return nil, nil, e
	case version != ProtocolVersion:
		e := refuse(http.StatusBadRequest, CodeUnsupportedProtocolVer, "unsupported protocol version %q; this server speaks %s", version, ProtocolVersion)
		e.data = unsupported{Supported: []string{ProtocolVersion}, Requested: version}
		return nil, nil, e
	}
	switch h, e := header(c, HeaderMethod); {
	case e != nil:
		return nil, nil, e
	case h == "":
		return nil, nil, refuse(http.StatusBadRequest, CodeHeaderMismatch, "the %s header is required", HeaderMethod)
	case h != method:
		return nil, nil, refuse(http.StatusBadRequest, CodeHeaderMismatch, "%s header %q does not match the body's method %q", HeaderMethod, h, method)
	}
	params = make(map[string]json.RawMessage, 4)
	if raw, ok := msg["params"]; ok && unmarshal(raw, &params) != nil || params == nil {
		return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, `"params" must be an object`)
	}
	meta = make(map[string]json.RawMessage, 4)
	if unmarshal(params["_meta"], &meta) != nil || meta == nil {
		return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, `"params._meta" must be an object with %s, %s and %s`, metaProtocolVersion, metaClientInfo, metaClientCapabilities)
	}
	switch v, ok := stringOf(meta[metaProtocolVersion]); {
	case !ok:
		return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, "_meta[%q] must be a string", metaProtocolVersion)
	case v != version:
		return nil, nil, refuse(http.StatusBadRequest, CodeHeaderMismatch, "%s header %q does not match _meta[%q] %q", HeaderProtocolVersion, version, metaProtocolVersion, v)
	}
	var info struct{ Name, Version *string }
	if !isObject(meta[metaClientInfo]) || unmarshal(meta[metaClientInfo], &info) != nil || info.Name == nil || info.Version == nil {
		return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, "_meta[%q] must be an object with name and version strings", metaClientInfo)
	}
	if !isObject(meta[metaClientCapabilities]) {
		return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, "_meta[%q] must be an object", metaClientCapabilities)
	}
	if !slices.Contains(Methods, method) {
		return nil, nil, refuse(http.StatusNotFound, CodeMethodNotFound, "method %q is not served here; this server answers %s", method, strings.Join(Methods, ", "))
	}
	if method == "tools/call" {
		name, ok := stringOf(params["name"])
		if !ok {
			return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, `"params.name" must be a tool name`)
		}
		// The SDK panics, in a goroutine no recover reaches, on arguments
		// null for a tool with defaults: only an object gets through.
		if args, ok := params["arguments"]; ok && !isObject(args) {
			return nil, nil, refuse(http.StatusBadRequest, CodeInvalidParams, `"params.arguments" must be an object`)
		}
		switch h, e := header(c, HeaderName); {
		case e != nil:
			return nil, nil, e
		case h == "":
			return nil, nil, refuse(http.StatusBadRequest, CodeHeaderMismatch, "the %s header is required for tools/call", HeaderName)
		case decodeHeaderValue(h) != name:
			return nil, nil, refuse(http.StatusBadRequest, CodeHeaderMismatch, "%s header %q does not match params.name %q", HeaderName, h, name)
		}
	}
	return params, meta, nil
}

// header returns the one value of a request header, or "" without one.
func header(c *fiber.Ctx, name string) (string, *rpcError) {
	switch vs := c.Request().Header.PeekAll(name); len(vs) {
	case 0:
		return "", nil
	case 1:
		return string(vs[0]), nil
	default:
		return "", refuse(http.StatusBadRequest, CodeHeaderMismatch, "more than one %s header", name)
	}
}

// decodeHeaderValue undoes the =?base64?...?= encoding of a header value
// that is not plain ASCII; a malformed encoding stays as it is, and so
// cannot match.
func decodeHeaderValue(v string) string {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			if b, err := base64.StdEncoding.DecodeString(inner); err == nil {
				return string(b)
			}
		}
	}
	return v
}

// errTrailingData is a document that goes on after its value.
var errTrailingData = &json.SyntaxError{}

// unmarshal decodes one JSON value into v as encoding/json.Unmarshal does,
// with segmentio's decoder (the SDK's), several times faster; the
// json.RawMessage values it sets point into data.
func unmarshal(data []byte, v any) error {
	rest, err := sjson.Parse(data, v, sjson.DontCopyRawMessage)
	if err == nil && len(rest) > 0 {
		err = errTrailingData
	}
	return err
}

// stringOf decodes a JSON string.
func stringOf(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if plain := raw[1 : len(raw)-1]; utf8.Valid(plain) && !bytes.ContainsFunc(plain, func(r rune) bool { return r < ' ' || r == '"' || r == '\\' }) {
		return string(plain), true // nothing to decode
	}
	var s string
	if unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// responseID is a request's id as the SDK writes it in the response: a
// string decoded and encoded again (without HTML escaping), an integer in
// its shortest form.
func responseID(raw json.RawMessage) json.RawMessage {
	if s, ok := stringOf(raw); ok {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s) // a string cannot fail
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return strconv.AppendInt(nil, n, 10)
}

// validID accepts a string or an integer within JSON's exact range.
func validID(raw json.RawMessage) bool {
	if _, ok := stringOf(raw); ok {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n > -(1<<53) && n < 1<<53
}

func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

// acceptsJSON reports whether Accept headers allow application/json; no
// header allows anything.
func acceptsJSON(values [][]byte) bool {
	if len(values) == 0 || len(values) == 1 && (string(values[0]) == "application/json, text/event-stream" || string(values[0]) == "application/json") {
		return true // what clients send
	}
	for _, v := range values {
		for _, r := range strings.Split(string(v), ",") {
			t, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil || !slices.Contains([]string{"application/json", "application/*", "*/*"}, t) {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
				continue
			}
			return true
		}
	}
	return false
}

func isLoopbackOrigin(o string) bool {
	scheme, hostport, ok := strings.Cut(o, "://")
	if !ok || scheme != "http" && scheme != "https" {
		return false
	}
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return isLoopbackHost(hostport)
}

// isLoopbackHost reports whether host (without port) names this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.IsLoopback()
}

// mustMarshal encodes values decoded from JSON, which cannot fail.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
