package live

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// headRouter registers every GET route for HEAD too, as fiber's own Get
// does; humafiber registers GET alone.
type headRouter struct{ fiber.Router }

func (r headRouter) Add(method, path string, handlers ...fiber.Handler) fiber.Router {
	if method == fiber.MethodGet {
		r.Router.Add(fiber.MethodHead, path, handlers...)
	}
	return r.Router.Add(method, path, handlers...)
}

// finish checks and completes a definition once every route is registered:
// a POST operation must carry the pipeline's rule (Post), every operation
// records the names it declares (for safeLocation), and the documented
// validation status is 400, the one answered.
func (d *definition) finish() {
	for _, api := range []huma.API{d.v1, d.proof} {
		if api == nil {
			continue
		}
		registry := api.OpenAPI().Components.Schemas
		for path, item := range api.OpenAPI().Paths {
			for _, op := range operations(item) {
				if op.Method != http.MethodGet && op.Metadata[postRuleKey] == nil {
					panic(fmt.Sprintf("live: %s %s is not registered with live.Post: every POST route goes through the request pipeline", op.Method, path))
				}
				if op.Metadata == nil {
					op.Metadata = map[string]any{}
				}
				op.Metadata[declaredNamesKey] = declaredNames(op, registry)
				documentBadRequest(op)
			}
		}
	}
	d.served = newRouteTable(d)
}

// serves reports whether path (concrete, such as /api/v1/towns/case, or a
// template, such as /api/node/{id}) is a route this definition answers.
// Whatever the live edge says is live is derived from it: a feature, a
// town, a node's public route is announced as live only while its route
// answers.
func (d *definition) serves(path string) bool { return d.served.serves(path) }

// serves is definition.serves, for a caller that keeps the table alone.
func (t *routeTable) serves(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	return t.match([]byte(path)) != nil
}

func operations(item *huma.PathItem) []*huma.Operation {
	var out []*huma.Operation
	for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
		if op != nil {
			out = append(out, op)
		}
	}
	return out
}

// documentBadRequest replaces the 422 huma documents for operations with
// parameters or a body by the 400 they answer. huma appends 422 to the
// errors an operation lists; one that lists 422 itself (a semantic check)
// keeps it.
func documentBadRequest(op *huma.Operation) {
	r := op.Responses["422"]
	if r == nil {
		return
	}
	n := 0
	for _, code := range op.Errors {
		if code == http.StatusUnprocessableEntity {
			n++
		}
	}
	if n > 1 {
		return
	}
	delete(op.Responses, "422")
	if op.Responses["400"] == nil {
		bad := *r
		bad.Description = http.StatusText(http.StatusBadRequest)
		op.Responses["400"] = &bad
	}
}

// declaredNames are the names an operation declares: its parameters and
// every property of its body's schema, nested ones included.
func declaredNames(op *huma.Operation, registry huma.Registry) map[string]bool {
	names := map[string]bool{}
	for _, p := range op.Parameters {
		names[p.Name] = true
	}
	seen := map[*huma.Schema]bool{}
	var walk func(s *huma.Schema)
	walk = func(s *huma.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Ref != "" {
			walk(registry.SchemaFromRef(s.Ref))
		}
		for name, p := range s.Properties {
			names[name] = true
			walk(p)
		}
		walk(s.Items)
		if ap, ok := s.AdditionalProperties.(*huma.Schema); ok {
			walk(ap)
		}
		for _, group := range [][]*huma.Schema{s.OneOf, s.AnyOf, s.AllOf} {
			for _, sub := range group {
				walk(sub)
			}
		}
	}
	if op.RequestBody != nil {
		for _, mt := range op.RequestBody.Content {
			walk(mt.Schema)
		}
	}
	return names
}

// routeTable knows the paths of one listener's live routes, the methods
// each answers and the pipeline rule of its POST, to answer what routing
// does not: 405 and OPTIONS, and the body rules before routing. It matches
// a path as fiber does: letter case and trailing slashes aside, each
// {param} one segment.
type routeTable struct {
	routes []tableRoute
	// literal holds, by lower-case path, the route that matches each
	// literal route's own path; params are the routes with a {param}.
	// A path equal to a literal route's is answered from the map, any
	// other from params, in routes' order: as scanning routes would.
	literal map[string]*tableRoute
	params  []*tableRoute
	reading bodyReads
}

type tableRoute struct {
	segments []string // the template's, lower case; "" for a {param}
	allow    string   // the Allow header
	post     *postRule
}

// refusal returns the writer of the route's refusals: nil, problems, for
// no route or a route without one.
func (r *tableRoute) refusal() refusalWriter {
	if r == nil || r.post == nil {
		return nil
	}
	return r.post.refuse
}

// The Allow header of a static file.
const staticAllow = "GET, HEAD, OPTIONS"

func newRouteTable(d *definition) *routeTable {
	t := &routeTable{}
	for path, item := range d.paths() {
		r := tableRoute{}
		for seg := range strings.SplitSeq(strings.Trim(strings.ToLower(path), "/"), "/") {
			if strings.HasPrefix(seg, "{") {
				seg = ""
			}
			r.segments = append(r.segments, seg)
		}
		methods := []string{}
		if item.Get != nil {
			methods = append(methods, http.MethodGet, http.MethodHead)
		}
		if item.Post != nil {
			methods = append(methods, http.MethodPost)
			r.post, _ = item.Post.Metadata[postRuleKey].(*postRule)
		}
		r.allow = strings.Join(append(methods, http.MethodOptions), ", ")
		t.routes = append(t.routes, r)
	}
	// Literal segments before parameters: /a/b is not /a/{x}.
	slices.SortFunc(t.routes, func(a, b tableRoute) int {
		return strings.Compare(strings.Join(b.segments, "/"), strings.Join(a.segments, "/"))
	})
	t.literal = map[string]*tableRoute{}
	for i := range t.routes {
		r := &t.routes[i]
		if slices.Contains(r.segments, "") {
			t.params = append(t.params, r)
			continue
		}
		path := "/" + strings.Join(r.segments, "/")
		t.literal[path] = t.scan([]byte(path)) // r, unless a {param} route before it matches too
	}
	return t
}

// match returns the route of a request path (raw, as sent), or nil.
func (t *routeTable) match(path []byte) *tableRoute {
	path = bytes.TrimRight(path, "/")
	if len(path) == 0 || path[0] != '/' {
		return nil
	}
	var buf [128]byte
	if len(path) > len(buf) {
		return t.scan(path)
	}
	lower := buf[:len(path)]
	for i, c := range path {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	if r, ok := t.literal[string(lower)]; ok {
		return r
	}
	for _, r := range t.params {
		if matchSegments(r.segments, path[1:]) {
			return r
		}
	}
	return nil
}

// scan is match by trying every route in order, for a path trimmed as
// match trims it.
func (t *routeTable) scan(path []byte) *tableRoute {
	for i := range t.routes {
		if matchSegments(t.routes[i].segments, path[1:]) {
			return &t.routes[i]
		}
	}
	return nil
}

func matchSegments(segments []string, path []byte) bool {
	for i, seg := range segments {
		part := path
		k := bytes.IndexByte(path, '/')
		if (k >= 0) != (i < len(segments)-1) {
			return false // more or fewer segments than the template
		}
		if k >= 0 {
			part, path = path[:k], path[k+1:]
		}
		if seg == "" && len(part) == 0 || seg != "" && !equalFoldASCII(part, seg) {
			return false
		}
	}
	return true
}

// equalFoldASCII compares as fiber routes: ASCII letters in any case.
func equalFoldASCII(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// requestPath returns the path of a request target as sent: without the
// query, and without scheme and host in absolute form.
func requestPath(uri []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if i := bytes.Index(uri, []byte("://")); i >= 0 && !bytes.HasPrefix(uri, []byte("/")) {
		uri = uri[i+3:]
		if j := bytes.IndexByte(uri, '/'); j >= 0 {
			uri = uri[j:]
		} else {
			uri = []byte("/")
		}
	}
	return uri
}

// send answers a request with p in the format of the route its path
// names (a problem unless the route writes its own refusals).
func (t *routeTable) send(ctx *fasthttp.RequestCtx, p *huma.ErrorModel) {
	refuse(ctx, p, t.match(requestPath(ctx.Request.Header.RequestURI())).refusal())
}

// postRule returns the pipeline rule of a POST request's route, or nil.
func (t *routeTable) postRule(h *fasthttp.RequestHeader) *postRule {
	if !h.IsPost() {
		return nil
	}
	if r := t.match(requestPath(h.RequestURI())); r != nil {
		return r.post
	}
	return nil
}

// headerReceived runs when a request's headers are in, before its body is
// read: a POST route's body is read up to its own limit, and a request that
// expects 100 Continue and that the route would refuse by its headers
// (media type, declared length) is refused without the 100 and without
// reading the body. The expectation is removed, and the body limit set so
// that fasthttp fails the read at once; serverError answers the refusal.
func (t *routeTable) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	rule := t.postRule(h)
	if rule == nil {
		return fasthttp.RequestConfig{}
	}
	if h.ContentLength() != 0 {
		t.reading.start(h, rule)
	}
	cfg := fasthttp.RequestConfig{MaxRequestBodySize: max(rule.MaxBodyBytes, 1)}
	if bytes.EqualFold(h.Peek(fasthttp.HeaderExpect), []byte("100-continue")) && checkBody(h.ContentType(), h.ContentLength(), rule) != nil {
		h.Del(fasthttp.HeaderExpect)
		cfg.MaxRequestBodySize = 1
	}
	return cfg
}

// bodyReads remembers the rule of a POST route's request while its body is
// read: when reading fails (a chunked body over the limit, a body that
// stops arriving), fasthttp resets the request, path included, before
// serverError runs, which still answers with the route's limit and in the
// route's format. An entry belongs to the request that failed only if it
// was made on the same connection (at or after ctx.ConnTime()): one left by
// a connection that closed mid-body is not, and a request that was read is
// forgotten before it is served (front). Keys are weak, so that no request
// context the server's pool drops is kept alive.
type bodyReads struct {
	mu      sync.Mutex
	m       map[weak.Pointer[fasthttp.RequestHeader]]bodyRead
	sweepAt int
}

type bodyRead struct {
	rule *postRule
	at   time.Time
}

func (b *bodyReads) start(h *fasthttp.RequestHeader, rule *postRule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[weak.Pointer[fasthttp.RequestHeader]]bodyRead{}
	}
	if len(b.m) >= b.sweepAt {
		for k := range b.m {
			if k.Value() == nil {
				delete(b.m, k)
			}
		}
		b.sweepAt = max(64, 2*len(b.m))
	}
	b.m[weak.Make(h)] = bodyRead{rule: rule, at: time.Now()}
}

// end forgets the request of ctx and returns its route's rule, if its body
// was being read on this connection.
func (b *bodyReads) end(ctx *fasthttp.RequestCtx) *postRule {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) == 0 {
		return nil
	}
	k := weak.Make(&ctx.Request.Header)
	r, ok := b.m[k]
	delete(b.m, k)
	if !ok || r.at.Before(ctx.ConnTime()) {
		return nil
	}
	return r.rule
}

// fallback answers what no route matched: GET and HEAD of the static site,
// OPTIONS (204 with Allow) and other methods (405 with Allow) on live
// routes and static files, 404 otherwise. Requests with other methods than
// GET, HEAD and OPTIONS share one rate budget per client.
func (s *Server) fallback(t *routeTable, apiOnly bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		method, path := c.Method(), c.Path()
		api := apiOnly || isAPIPath(path)
		tile, isTile := s.tiles.tileName(path)
		if !api && (method == fiber.MethodGet || method == fiber.MethodHead) {
			if isTile {
				return s.serveTile(c, tile)
			}
			return s.static.serve(c)
		}
		r := t.match([]byte(path))
		w := r.refusal()
		if method != fiber.MethodGet && method != fiber.MethodHead && method != fiber.MethodOptions && s.limiter != nil {
			if p := s.overLimit(c, "", s.opts.PostLimit); p != nil {
				refuse(c.Context(), p, w)
				return nil
			}
		}
		allow := ""
		if r != nil {
			allow = r.allow
		} else if !api && s.static.exists(path) {
			allow = staticAllow
		} else if isTile && s.tileExists(tile) {
			allow = staticAllow
		}
		if allow == "" {
			return fiber.ErrNotFound
		}
		c.Set(fiber.HeaderAllow, allow)
		if method == fiber.MethodOptions {
			return c.SendStatus(fiber.StatusNoContent)
		}
		if w != nil {
			c.Locals(refusalKey, w)
		}
		return fiber.ErrMethodNotAllowed
	}
}
