package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
)

// Serve answers one request to the MCP endpoint: the guard checks it, the
// SDK answers it, and the answer leaves as one JSON object that no cache
// keeps. Mount it for every method (app.All): the guard answers methods
// other than POST with 405.
func (s *Server) Serve(c *fiber.Ctx) error {
	req, e := s.guard.check(c)
	if e != nil {
		writeError(c.Context(), req.id, e)
		return nil
	}
	kept := s.kept[req.method]
	if req.plain && kept != nil {
		if result := kept.Load(); result != nil {
			return writeResult(c, req.id, *result)
		}
	}
	if t := s.fastTool(req); t != nil {
		if a, at, ok := t.answer(c.Context()); ok {
			return writeResult(c, req.id, a.head, at, a.mid, at, a.tail)
		}
	}
	// The SDK reads the message the guard checked. It answers JSON alone,
	// so an Accept the guard let through is stated the way the SDK wants
	// it; session and resumption headers of older revisions are ignored.
	r := &c.Request().Header
	r.Set(fiber.HeaderAccept, "application/json, text/event-stream")
	r.Del("Mcp-Session-Id")
	r.Del("Last-Event-Id")
	if req.name != "" && isToken(req.name) {
		r.Set(HeaderName, req.name)
	}
	c.Request().SetBody(req.body())
	if err := s.bridge(c); err != nil {
		return err
	}
	resp := &c.Response().Header
	resp.Del(fiber.HeaderCacheControl)
	resp.Del("Mcp-Session-Id")
	c.Set(fiber.HeaderCacheControl, "no-store")
	if status := c.Response().StatusCode(); !isJSON(string(resp.ContentType())) {
		// A refusal of the SDK's own in plain text, which the guard should
		// have made impossible: keep the status, say it in JSON-RPC.
		code := CodeInvalidRequest
		if status >= 500 {
			code = CodeInternalError
		}
		writeError(c.Context(), req.id, refuse(status, code, "%s", http.StatusText(status)))
		return nil
	}
	if req.plain && kept != nil && c.Response().StatusCode() == http.StatusOK {
		var answer struct{ Result json.RawMessage }
		if json.Unmarshal(c.Response().Body(), &answer) == nil && len(answer.Result) > 0 {
			kept.Store(&answer.Result)
		}
	}
	return nil
}

// keptMethods are the methods whose results cannot change while the server
// runs (the tools are fixed at New): the SDK's first answer to each is kept
// and sent again with the next request's id. The SDK spends about a
// millisecond on a request, mostly decoding JSON; tools/list needs none of
// that work twice.
var keptMethods = []string{"server/discover", "tools/list"}

// writeResult answers a request with a result, written in parts, as the
// SDK writes it.
func writeResult(c *fiber.Ctx, id json.RawMessage, result ...[]byte) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	r := c.Response()
	r.AppendBodyString(`{"jsonrpc":"2.0","id":`)
	r.AppendBody(id)
	r.AppendBodyString(`,"result":`)
	for _, part := range result {
		r.AppendBody(part)
	}
	r.AppendBodyString("}")
	return nil
}

// errorResponse is a JSON-RPC error response. Without a known id it has
// none, as 2026-07-28 asks of transport refusals.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	} `json:"error"`
}

func writeError(ctx *fasthttp.RequestCtx, id json.RawMessage, e *rpcError) {
	body := errorResponse{JSONRPC: "2.0", ID: id}
	body.Error.Code, body.Error.Message, body.Error.Data = e.code, e.message, e.data
	h := &ctx.Response.Header
	h.Set(fiber.HeaderCacheControl, "no-store")
	h.SetContentType(fiber.MIMEApplicationJSON)
	ctx.SetStatusCode(e.status)
	ctx.SetBody(mustMarshal(body))
}

// WriteError answers a request to the MCP endpoint that the server refused
// before the endpoint ran (a body over the limit, a method other than
// POST, a timeout, a failure) with a JSON-RPC error without an id, as the
// endpoint answers its own refusals, instead of the server's usual error
// document. message must not quote the request or reveal internals.
func WriteError(ctx *fasthttp.RequestCtx, status int, code int64, message string) {
	writeError(ctx, nil, &rpcError{status: status, code: code, message: message})
}

// IsEndpoint reports whether path is one of the MCP endpoints.
func IsEndpoint(path string) bool { return path == Endpoint || path == APIEndpoint }

// listTTLMs is how long a client may keep server/discover and tools/list
// answers: the tools do not change while the server runs.
const listTTLMs = 10 * 60 * 1000

func cacheable(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
	c.TTLMs, c.CacheScope = listTTLMs, "public"
}

// isToken reports whether s can stand in a header as it is.
func isToken(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' })
}
