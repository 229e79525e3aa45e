package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/strictjson"
	"github.com/valyala/fasthttp"
)

// The request pipeline. Every operation of the definition runs through
// pipeline, a huma middleware installed on every API when it is created
// (definition.newAPI), before huma parses anything:
//
//   - a query parameter the operation declares may be given once, with the
//     declared letter case (400);
//   - a POST operation applies the rules it was registered with (Post): the
//     client's rate on this operation (429 with Retry-After), its
//     credentials when the route has an Authorizer (401 with
//     WWW-Authenticate), then the body's media type (415), size (413) and
//     strict JSON form (400, see strictjson), in that order.
//
// huma then validates parameters and the body against their schemas (400,
// see problems.go) and calls the handler. A POST operation registered any
// other way than Post (or postHandler) is refused when the definition is
// finished, so no route can skip the pipeline. Before routing, the fasthttp server applies
// the same body rules to the request's headers (routeTable.headerReceived),
// so that an over-long or mistyped body is refused before it is read, and
// before 100 Continue is sent.

// PostRoute is what the request pipeline enforces on one POST operation,
// declared where the route is registered (Post).
type PostRoute struct {
	// Limit is the per-client rate of the operation, shared by every
	// listener; the zero value means Options.PostLimit. Options.Limits may
	// override it by path.
	Limit Limit
	// Unlimited marks a read carried by POST (the MCP endpoints): no rate,
	// as for GET routes, unless Options.Limits sets one by path.
	Unlimited bool
	// MaxBodyBytes bounds the body; 0 means DefaultBodyBytes. At most
	// MaxBodyBytes.
	MaxBodyBytes int
	// Refusal, when set, says why the route accepts no member it does not
	// declare; it is added to the detail of an unknown-member problem.
	Refusal string
	// Auth, when set, authorizes the request from its Authorization header
	// once the rate allows it and before its body is checked: a refusal is
	// 401 with WWW-Authenticate, and the handler never runs. Credentials
	// are read from that header only, never from the query string.
	Auth Authorizer
}

// Authorizer checks the credentials of a POST route (PostRoute.Auth).
type Authorizer interface {
	// Authorize checks an Authorization header value ("" when there is
	// none). A refusal returns the WWW-Authenticate challenge to answer
	// with and why, in words fit for the client.
	Authorize(authorization string) (challenge, reason string, ok bool)
}

// bearerScheme names the security scheme of routes with an Authorizer in
// the OpenAPI descriptions.
const bearerScheme = "bearer"

// postRule is a PostRoute as the pipeline applies it.
type postRule struct {
	PostRoute               // MaxBodyBytes 0: the route takes no body
	body      reflect.Type  // the Go type of the body; nil for any JSON value
	refuse    refusalWriter // nil: refusals are problem JSON
}

// refusalWriter writes a refusal of a request in its route's own format,
// in place of problem JSON: the MCP endpoints answer JSON-RPC errors
// (mcpRefusal). p quotes nothing of the request; the headers every
// response carries are already set.
type refusalWriter func(ctx *fasthttp.RequestCtx, p *huma.ErrorModel)

// refusalKey holds a route's refusalWriter in the fiber.Ctx's locals, for
// handleError.
const refusalKey = "live.refuse"

// Keys of huma.Operation.Metadata.
const (
	postRuleKey      = "live.post"  // *postRule, set by Post
	declaredNamesKey = "live.names" // map[string]bool, set by definition.finish
)

// Post registers a POST operation on api behind the request pipeline: the
// body must be application/json, within route.MaxBodyBytes, strict JSON
// (strictjson: no duplicate or case-folded member names, valid UTF-8,
// nothing after the value, and no member the body type does not declare
// unless it allows others with a blank field tagged
// additionalProperties:"true"), and the client within route.Limit. In is
// huma's input struct; its Body field, if any, is the body. Every POST
// route of the live edge is registered with Post (or, for a handler that
// decodes its own body, definition.postHandler):
//
//	Post(d.v1, huma.Operation{OperationID: "chat", Path: "/api/chat", Summary: "..."},
//		PostRoute{Limit: ChatLimit, MaxBodyBytes: 8 << 10}, handler)
func Post[In, Out any](api huma.API, op huma.Operation, route PostRoute, handler func(context.Context, *In) (*Out, error)) {
	f, takesBody := reflect.TypeFor[In]().FieldByName("Body")
	rule := declarePost(&op, route, f.Type, takesBody)
	// huma refuses a body of exactly its own limit: one byte more leaves
	// the decision to the pipeline.
	op.MaxBodyBytes = int64(rule.MaxBodyBytes) + 1
	op.Errors = append(op.Errors, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusTooManyRequests)
	if route.Auth != nil {
		op.Errors = append(op.Errors, http.StatusUnauthorized)
		op.Security = []map[string][]string{{bearerScheme: {}}}
		c := api.OpenAPI().Components
		if c.SecuritySchemes == nil {
			c.SecuritySchemes = map[string]*huma.SecurityScheme{}
		}
		c.SecuritySchemes[bearerScheme] = &huma.SecurityScheme{Type: "http", Scheme: "bearer",
			Description: "Authorization: Bearer TOKEN; a missing or wrong token is 401 with WWW-Authenticate. A token in the query string is ignored."}
	}
	huma.Register(api, op, handler)
}

// postHandler registers a POST route served by a fiber handler, for a
// transport that decodes its own body (MCP's JSON-RPC), behind the same
// pipeline, the body checked as strict JSON of any shape; op documents it
// on api, and must list its responses. With refuse, every refusal of a
// request to the route, the pipeline's and the server's (405, 408, 413,
// 500), is written in the route's own format; op documents those
// responses itself.
func (d *definition) postHandler(api huma.API, op huma.Operation, route PostRoute, h fiber.Handler, refuse refusalWriter) {
	rule := declarePost(&op, route, nil, true)
	rule.refuse = refuse
	codes := []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType}
	if !route.Unlimited {
		codes = append(codes, http.StatusTooManyRequests)
	}
	for _, code := range codes {
		if op.Responses == nil {
			op.Responses = map[string]*huma.Response{}
		}
		if op.Responses[strconv.Itoa(code)] == nil {
			op.Responses[strconv.Itoa(code)] = &huma.Response{Description: http.StatusText(code),
				Content: map[string]*huma.MediaType{"application/problem+json": {}}}
		}
	}
	api.OpenAPI().AddOperation(&op)
	d.app.Post(strings.NewReplacer("{", ":", "}", "").Replace(op.Path), func(c *fiber.Ctx) error {
		if refuse != nil {
			c.Locals(refusalKey, refuse)
		}
		if !d.s.admit(c, &op, rule) {
			return nil
		}
		return h(c)
	})
}

// declarePost completes a POST operation's declaration with the
// pipeline's rule.
func declarePost(op *huma.Operation, route PostRoute, body reflect.Type, takesBody bool) *postRule {
	if route.MaxBodyBytes == 0 {
		route.MaxBodyBytes = DefaultBodyBytes
	}
	if route.MaxBodyBytes < 0 || route.MaxBodyBytes > MaxBodyBytes || (route.Limit != Limit{} && !route.Limit.valid()) {
		panic(fmt.Sprintf("live: POST %s: body limit %d or rate %v out of range", op.Path, route.MaxBodyBytes, route.Limit))
	}
	rule := &postRule{PostRoute: route, body: body}
	if !takesBody {
		rule.MaxBodyBytes = 0
	}
	op.Method = http.MethodPost
	op.Metadata = maps.Clone(op.Metadata)
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[postRuleKey] = rule
	op.Extensions = maps.Clone(op.Extensions)
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions["x-max-body-bytes"] = rule.MaxBodyBytes
	switch {
	case route.Unlimited:
		op.Extensions["x-rate-limit"] = false
	case route.Limit.valid():
		op.Extensions["x-rate-limit"] = map[string]any{"requests": route.Limit.Max, "per_seconds": route.Limit.Window.Seconds(), "per": "client"}
	}
	return rule
}

// pipeline is the middleware every operation runs through (see above).
func (d *definition) pipeline(ctx huma.Context, next func(huma.Context)) {
	c := humafiber.Unwrap(ctx)
	op := ctx.Operation()
	if op.Metadata[clientKey] == true {
		ctx = huma.WithValue(ctx, clientKey, d.s.clientIP.of(c))
	}
	if uri := c.Request().URI(); len(uri.QueryString()) > 0 {
		if p := checkQuery(uri.QueryArgs(), op); p != nil {
			p.Instance = c.Path()
			sendProblem(c.Context(), p)
			return
		}
	}
	if op.Method == http.MethodGet {
		next(ctx)
		return
	}
	rule, _ := op.Metadata[postRuleKey].(*postRule)
	if rule == nil { // definition.finish refuses such a definition
		sendProblem(c.Context(), statusProblem(http.StatusInternalServerError, ""))
		return
	}
	if d.s.admit(c, op, rule) {
		next(ctx)
	}
}

// admit applies a POST operation's rules in order: the client's rate, its
// credentials (PostRoute.Auth), the body's media type, size and strict form. It answers a refusal itself and
// reports whether the request goes on.
func (s *Server) admit(c *fiber.Ctx, op *huma.Operation, rule *postRule) bool {
	body := c.Body()
	h := &c.Request().Header
	p := s.overLimit(c, op.OperationID, s.limitOf(op.Path, rule))
	if p == nil && rule.Auth != nil {
		if challenge, reason, ok := rule.Auth.Authorize(string(h.Peek(fiber.HeaderAuthorization))); !ok {
			c.Set(fiber.HeaderWWWAuthenticate, challenge)
			p = statusProblem(http.StatusUnauthorized, reason)
		}
	}
	if p == nil {
		p = checkBody(h.ContentType(), len(body), rule)
	}
	if p == nil && len(body) > 0 {
		if err := strictjson.Check(body, rule.body); err != nil {
			p = jsonProblem(err)
			if rule.Refusal != "" && errors.Is(err, strictjson.ErrUnknownMember) {
				p.Detail += ": " + rule.Refusal
			}
		} else {
			h.SetContentType("application/json") // the form huma's format table knows
		}
	}
	if p != nil {
		p.Instance = c.Path()
		refuse(c.Context(), p, rule.refuse)
		return false
	}
	return true
}

// limitOf is the rate of a POST operation: Options.Limits by path, else
// none for an unlimited route, else the route's own, else
// Options.PostLimit. The zero Limit is no limit.
func (s *Server) limitOf(path string, rule *postRule) Limit {
	if l, ok := s.opts.Limits[path]; ok && l.valid() {
		return l
	}
	if rule.Unlimited {
		return Limit{}
	}
	if rule.Limit.valid() {
		return rule.Limit
	}
	return s.opts.PostLimit
}

// checkBody applies the rules a request's headers can tell: a body (length
// not 0; -1 when unknown) or a declared media type must be JSON, and the
// body must fit the route.
func checkBody(contentType []byte, length int, rule *postRule) *huma.ErrorModel {
	if (length != 0 || len(contentType) > 0) && !isJSON(contentType) {
		return statusProblem(http.StatusUnsupportedMediaType,
			"send the body as Content-Type: application/json (a charset parameter, if any, must be utf-8)")
	}
	if length > rule.MaxBodyBytes {
		return tooLarge(rule)
	}
	return nil
}

func tooLarge(rule *postRule) *huma.ErrorModel {
	if rule.MaxBodyBytes == 0 {
		return statusProblem(http.StatusRequestEntityTooLarge, "this route takes no body")
	}
	return statusProblem(http.StatusRequestEntityTooLarge, fmt.Sprintf("this route takes at most %d bytes of body", rule.MaxBodyBytes))
}

// isJSON reports whether a Content-Type is application/json, whatever its
// letter case, with no charset or charset=utf-8.
func isJSON(contentType []byte) bool {
	if bytes.EqualFold(contentType, []byte("application/json")) { // the common case, without parsing
		return true
	}
	media, params, err := mime.ParseMediaType(string(contentType))
	if err != nil || media != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// jsonSlugs name the problem of each strict-JSON rule.
var jsonSlugs = []struct {
	err          error
	slug, detail string
}{
	{strictjson.ErrDuplicate, "duplicate-member", "a member name appears twice in one object"},
	{strictjson.ErrCaseMismatch, "member-case", "a member name differs only in letter case from a declared field; names are case-sensitive"},
	{strictjson.ErrUnknownMember, "unknown-member", "a member is not one this route declares; no other fields are accepted"},
	{strictjson.ErrInvalidUTF8, "invalid-utf8", "the body is not valid UTF-8 (or escapes a lone UTF-16 surrogate)"},
	{strictjson.ErrTrailingData, "trailing-data", "the body goes on after its JSON value"},
	{strictjson.ErrSyntax, "malformed-json", "the body is not well-formed JSON"},
}

// jsonProblem says which strict-JSON rule a body breaks, and where, in the
// words of the route's declaration: it never quotes the body.
func jsonProblem(err error) *huma.ErrorModel {
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return problem(http.StatusBadRequest, "malformed-json", "the body is not well-formed JSON")
	}
	for _, j := range jsonSlugs {
		if !errors.Is(err, j.err) {
			continue
		}
		detail := j.detail
		if e.Field != "" {
			detail += fmt.Sprintf(": %q", e.Field)
		}
		loc := bodyLocation(e.Pointer)
		detail += fmt.Sprintf(" (at %s, byte %d)", loc, e.Offset)
		p := problem(http.StatusBadRequest, j.slug, detail)
		p.Errors = []*huma.ErrorDetail{{Location: loc, Message: j.detail}}
		return p
	}
	return problem(http.StatusBadRequest, "malformed-json", "the body is not well-formed JSON")
}

// bodyLocation writes a JSON Pointer of declared names and indexes as huma
// writes locations: "/items/2/name" is "body.items[2].name".
func bodyLocation(pointer string) string {
	loc := "body"
	for seg := range strings.SplitSeq(pointer, "/") {
		if seg == "" {
			continue
		}
		if _, err := strconv.Atoi(seg); err == nil {
			loc += "[" + seg + "]"
		} else {
			loc += "." + strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		}
	}
	return loc
}

// checkQuery refuses a query parameter op declares when it is given twice
// (huma would read the first, so ?preimage=false&preimage=true would pass a
// refusal of preimage=true) or with other letter case.
func checkQuery(args *fasthttp.Args, op *huma.Operation) *huma.ErrorModel {
	var seen uint64
	for key := range args.All() {
		for i, p := range op.Parameters {
			if p.In != "query" || i >= 64 {
				continue
			}
			if string(key) == p.Name {
				if seen&(1<<i) != 0 {
					return problem(http.StatusBadRequest, "repeated-parameter",
						fmt.Sprintf("the query parameter %q is given more than once; give it once", p.Name))
				}
				seen |= 1 << i
			} else if strings.EqualFold(string(key), p.Name) {
				return problem(http.StatusBadRequest, "parameter-case",
					fmt.Sprintf("a query parameter differs only in letter case from %q; names are case-sensitive", p.Name))
			}
		}
	}
	return nil
}
