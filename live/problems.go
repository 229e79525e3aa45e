package live

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/valyala/fasthttp"
)

// ProblemTypeBase prefixes every problem "type": stable identifiers that do
// not depend on where the service runs.
const ProblemTypeBase = "urn:proofsite:problem:"

// problemSlugs name the problem type of each status. Some refusals have a
// type of their own (see problem); sortedSlugs lists them all.
var problemSlugs = map[int]string{
	http.StatusBadRequest:                  "bad-request",
	http.StatusUnauthorized:                "unauthorized",
	http.StatusForbidden:                   "forbidden",
	http.StatusNotFound:                    "not-found",
	http.StatusMethodNotAllowed:            "method-not-allowed",
	http.StatusNotAcceptable:               "not-acceptable",
	http.StatusRequestTimeout:              "request-timeout",
	http.StatusRequestEntityTooLarge:       "body-too-large",
	http.StatusUnsupportedMediaType:        "unsupported-media-type",
	http.StatusUnprocessableEntity:         "unprocessable-content",
	http.StatusTooManyRequests:             "rate-limited",
	http.StatusRequestHeaderFieldsTooLarge: "headers-too-large",
	http.StatusNotImplemented:              "not-implemented",
	http.StatusServiceUnavailable:          "unavailable",
}

// Problem types of particular refusals, beside the one of each status.
var otherSlugs = []string{"internal", "metadata-only", "credentials-not-accepted", "invalid-request", "repeated-parameter",
	"parameter-case", "malformed-json", "duplicate-member", "member-case", "unknown-member", "invalid-utf8", "trailing-data",
	"write-failed", "unknown-node"}

func problemType(status int) string {
	if slug, ok := problemSlugs[status]; ok {
		return ProblemTypeBase + slug
	}
	if status >= 500 {
		return ProblemTypeBase + "internal"
	}
	return "about:blank"
}

func sortedSlugs() []string {
	out := slices.Clone(otherSlugs)
	for _, s := range problemSlugs {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// problem is an RFC 9457 problem with a type of its own.
func problem(status int, slug, detail string) *huma.ErrorModel {
	return &huma.ErrorModel{Type: ProblemTypeBase + slug, Title: http.StatusText(status), Status: status, Detail: detail}
}

// statusProblem is the problem of a status, with the type of that status.
func statusProblem(status int, detail string) *huma.ErrorModel {
	return &huma.ErrorModel{Type: problemType(status), Title: http.StatusText(status), Status: status, Detail: detail}
}

// sendProblem makes p the response: application/problem+json, never
// cached, with the headers every response carries. It writes at the
// fasthttp level so that it serves errors found before routing too.
func sendProblem(ctx *fasthttp.RequestCtx, p *huma.ErrorModel) {
	body, err := json.Marshal(p)
	if err != nil { // a problem is strings and numbers: cannot happen
		body = []byte(`{"status":500}`)
	}
	h := &ctx.Response.Header
	putCommonHeaders(h)
	noStoreHeader.put(h)
	h.SetContentType("application/problem+json")
	ctx.SetStatusCode(p.Status)
	ctx.SetBody(append(body, '\n'))
}

// refuse answers a request with p, written by w in its route's own format
// (with the headers every response carries), or as a problem without w.
func refuse(ctx *fasthttp.RequestCtx, p *huma.ErrorModel, w refusalWriter) {
	if w == nil {
		sendProblem(ctx, p)
		return
	}
	h := &ctx.Response.Header
	putCommonHeaders(h)
	noStoreHeader.put(h)
	w(ctx, p)
}

// Every error huma produces is a problem with a stable type. Errors huma
// finds in the request itself (parameters that do not parse or validate,
// a body that does not match its schema) are 400 invalid-request, not
// huma's 422: malformed input is 400 everywhere, and 422 is kept for
// well-formed requests whose content fails a semantic check (a handler
// returns it with problem). No problem quotes the request: their messages
// are huma's fixed texts, cut before any value, and their locations name
// declared fields only. 5xx problems carry no internal detail.
func init() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		// A handler's own huma.ErrorXxx: its message is ours.
		p := statusProblem(status, msg)
		p.Errors = errorDetails(errs, nil)
		if status >= 500 {
			p.Detail, p.Errors = "", nil
		}
		return p
	}
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		p := statusProblem(status, requestMessage(msg))
		if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
			p = problem(http.StatusBadRequest, "invalid-request", p.Detail)
		}
		if ctx != nil {
			op := ctx.Operation()
			p.Errors = errorDetails(errs, op)
			p.Instance = humafiber.Unwrap(ctx).Path()
		}
		if status >= 500 {
			p.Detail, p.Errors = "", nil
		}
		return p
	}
}

// requestMessages are the messages huma gives a request error that may be
// shown as they are; huma writes values into others.
var requestMessages = []string{"validation failed", "request body is required", "request body is too large", "request body read timeout"}

func requestMessage(msg string) string {
	for _, m := range requestMessages {
		if strings.HasPrefix(msg, m) {
			return msg
		}
	}
	return "the request is malformed"
}

// huma's validation messages (huma/validation) begin with these words;
// those that go on with the value or a parser's error about it add it
// after ": ", and that part is cut.
var detailPrefixes = []string{"expected ", "unexpected property", "invalid ", "unparsable ", "required ", "write only property"}

// errorDetails turns huma's error details into ones that quote nothing of
// the request: known messages cut before any value, and locations kept only
// when every name in them is declared by op (with op nil, as they are:
// those are a handler's own).
func errorDetails(errs []error, op *huma.Operation) []*huma.ErrorDetail {
	out := make([]*huma.ErrorDetail, 0, len(errs))
	for _, err := range errs {
		if err == nil {
			continue
		}
		d := &huma.ErrorDetail{Message: err.Error()}
		var detailer huma.ErrorDetailer
		if errors.As(err, &detailer) {
			copied := *detailer.ErrorDetail()
			d = &copied
		}
		d.Value = nil // never echo the value: some (a declaration) must not come back
		if op != nil {
			d.Message = safeDetail(d.Message)
			d.Location = safeLocation(d.Location, op)
		}
		out = append(out, d)
	}
	return out
}

func safeDetail(msg string) string {
	for _, p := range detailPrefixes {
		if strings.HasPrefix(msg, p) {
			before, _, _ := strings.Cut(msg, ": ")
			return before
		}
	}
	return "invalid value"
}

// safeLocation returns loc ("body.items[2].name", "query.preimage") when
// each of its names is one op declares, or its part before the first name
// that is not (a map key is the sender's).
func safeLocation(loc string, op *huma.Operation) string {
	names, _ := op.Metadata[declaredNamesKey].(map[string]bool)
	kept := 0
	for i := 0; i <= len(loc); i++ {
		if i < len(loc) && loc[i] != '.' && loc[i] != '[' {
			continue
		}
		seg := loc[kept:i]
		if kept > 0 {
			seg = seg[1:] // the separator
		}
		if kept == 0 {
			if !slices.Contains([]string{"body", "query", "path", "header", "cookie"}, seg) {
				return ""
			}
		} else if !names[seg] && !isIndex(seg) {
			return loc[:kept]
		}
		kept = i
	}
	return loc
}

func isIndex(seg string) bool {
	if !strings.HasSuffix(seg, "]") || len(seg) < 2 {
		return false
	}
	for _, c := range seg[:len(seg)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
