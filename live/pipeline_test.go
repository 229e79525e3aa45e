package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/reload"
	"github.com/valyala/fasthttp"
)

// The request pipeline and the HTTP hygiene rules, against the real server
// on 127.0.0.1: both listeners, a real Badger chain, the handshake and
// routes registered for the tests with Post, as every POST route is.

// echoInput is the body of the test route: a closed struct with a nested
// object, a list and a validated field.
type echoInput struct {
	Body struct {
		Name  string     `json:"name" minLength:"1" maxLength:"20"`
		Count int        `json:"count,omitempty" minimum:"0"`
		Tags  []string   `json:"tags,omitempty" maxItems:"4"`
		Inner *echoInner `json:"inner,omitempty"`
	}
}

type echoInner struct {
	Label string `json:"label"`
}

type echoed struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// echoBodyLimit is the test route's body limit.
const echoBodyLimit = 256

// pipelineServer is a server on two loopback listeners with the test
// routes: POST /api/v1/test-echo (limited to echo per client), and POST
// /api/v1/test-slow, which answers when release is closed.
type pipelineServer struct {
	srv       *Server
	main, api string // host:port
	release   chan struct{}
	entered   chan struct{} // a test-slow request reached its handler
}

func startPipelineServer(t *testing.T, echo Limit, opts Options) *pipelineServer {
	t.Helper()
	ps := &pipelineServer{release: make(chan struct{}), entered: make(chan struct{}, 8)}
	opts.Chain = testChain(t)
	opts.testRoutes = func(d *definition) {
		Post(d.v1, huma.Operation{OperationID: "test-echo", Path: "/api/v1/test-echo", Summary: "Echo (tests)"},
			PostRoute{Limit: echo, MaxBodyBytes: echoBodyLimit}, func(_ context.Context, in *echoInput) (*reply[echoed], error) {
				return &reply[echoed]{Body: echoed{Name: in.Body.Name, Count: in.Body.Count}}, nil
			})
		d.postHandler(d.v1, huma.Operation{OperationID: "test-raw", Path: "/api/v1/test-raw", Summary: "Raw (tests)",
			Responses: map[string]*huma.Response{"200": {Description: "The body's length"}}},
			PostRoute{MaxBodyBytes: echoBodyLimit}, func(c *fiber.Ctx) error { return c.JSON(map[string]int{"bytes": len(c.Body())}) }, nil)
		Post(d.v1, huma.Operation{OperationID: "test-slow", Path: "/api/v1/test-slow", Summary: "Slow (tests)"},
			PostRoute{}, func(context.Context, *struct{}) (*reply[echoed], error) {
				ps.entered <- struct{}{}
				<-ps.release
				return &reply[echoed]{Body: echoed{Name: "slow"}}, nil
			})
	}
	ps.srv = newTestServer(t, opts)
	ps.main = listenLoopback(t, ps.srv.Serve)
	ps.api = listenLoopback(t, ps.srv.ServeAPI)
	return ps
}

func listenLoopback(t *testing.T, serve func(net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go serve(ln)
	return ln.Addr().String()
}

// rawConn is one client connection speaking raw HTTP/1.1.
type rawConn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second)) // a hung test fails instead
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

// response reads one response to a request with method.
func (rc *rawConn) response(method string) (*http.Response, []byte) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.r, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("reading a response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("reading a body: %v", err)
	}
	return resp, body
}

// closed reports whether the server closed the connection, waiting at
// most wait, and what it sent before.
func (rc *rawConn) closed(wait time.Duration) (bool, []byte) {
	rc.c.SetReadDeadline(time.Now().Add(wait))
	var rest bytes.Buffer
	_, err := io.Copy(&rest, rc.r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout()), rest.Bytes()
}

// exchange sends one raw request on a new connection and reads the answer.
func exchange(t testing.TB, addr, method, request string) (*http.Response, []byte) {
	t.Helper()
	rc := dial(t, addr)
	rc.send(request)
	return rc.response(method)
}

// request builds a raw request with a Host header, the given headers and
// body (Content-Length set when there is a body).
func request(method, target, body string, header ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: proof.test\r\n", method, target)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return b.String()
}

// checkProblem checks a problem response: its status, type, the headers
// every problem carries, and that it quotes nothing marked secret.
func checkProblem(t *testing.T, resp *http.Response, body []byte, status int, slug string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d: %.300s", resp.StatusCode, status, body)
	}
	var p struct{ Type, Detail string }
	if err := json.Unmarshal(body, &p); err != nil || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("not a problem (%v, %q): %.200s", err, resp.Header.Get("Content-Type"), body)
	}
	if p.Type != ProblemTypeBase+slug {
		t.Errorf("type %q, want %s: %.300s", p.Type, slug, body)
	}
	checkCommonHeaders(t, resp, true)
	if bytes.Contains(bytes.ToLower(body), []byte("secret")) {
		t.Errorf("the problem quotes the request: %s", body)
	}
}

// checkCommonHeaders checks what every response carries, and no-store on
// the API's.
func checkCommonHeaders(t *testing.T, resp *http.Response, api bool) {
	t.Helper()
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
	if got := resp.Header.Get("Cache-Control"); api && got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}

func TestStrictBodies(t *testing.T) {
	ps := startPipelineServer(t, Limit{1000, time.Minute}, Options{PostLimit: Limit{1000, time.Minute}})
	const echo, raw, handshake = "/api/v1/test-echo", "/api/v1/test-raw", "/api/v1/handshake"
	padded := func(n int) string { // a valid body of exactly n bytes
		doc := `{"name":"a"}`
		return doc[:len(doc)-1] + strings.Repeat(" ", n-len(doc)) + "}"
	}
	tests := []struct {
		desc, path, ctype, body string
		status                  int
		slug                    string // of the problem, or "" for a success
	}{
		{"valid", echo, "application/json", `{"name":"a","count":2,"tags":["x"],"inner":{"label":"l"}}`, 200, ""},
		{"charset utf-8", echo, "application/json; charset=utf-8", `{"name":"a"}`, 200, ""},
		{"media type in capitals", echo, "APPLICATION/JSON; Charset=UTF-8", `{"name":"a"}`, 200, ""},
		{"no content type", echo, "", `{"name":"a"}`, 415, "unsupported-media-type"},
		{"text/plain", echo, "text/plain", `{"name":"a"}`, 415, "unsupported-media-type"},
		{"a +json type", echo, "application/problem+json", `{"name":"a"}`, 415, "unsupported-media-type"},
		{"another charset", echo, "application/json; charset=iso-8859-1", `{"name":"a"}`, 415, "unsupported-media-type"},
		{"form", echo, "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\na\r\n--x--\r\n", 415, "unsupported-media-type"},
		{"duplicate member", echo, "application/json", `{"name":"a","name":"secret"}`, 400, "duplicate-member"},
		{"duplicate nested member", echo, "application/json", `{"name":"a","inner":{"label":"x","label":"secret"}}`, 400, "duplicate-member"},
		{"member differs in case", echo, "application/json", `{"Name":"secret"}`, 400, "member-case"},
		{"member differs in case after the exact one", echo, "application/json", `{"name":"a","NAME":"secret"}`, 400, "member-case"},
		{"unknown member", echo, "application/json", `{"name":"a","secret-token":"x"}`, 400, "unknown-member"},
		{"unknown nested member", echo, "application/json", `{"name":"a","inner":{"secret":1}}`, 400, "unknown-member"},
		{"invalid UTF-8", echo, "application/json", "{\"name\":\"secret\xff\"}", 400, "invalid-utf8"},
		{"lone surrogate", echo, "application/json", `{"name":"secret\ud800"}`, 400, "invalid-utf8"},
		{"trailing value", echo, "application/json", `{"name":"a"}{"name":"secret"}`, 400, "trailing-data"},
		{"trailing garbage", echo, "application/json", `{"name":"a"} secret`, 400, "trailing-data"},
		{"not JSON", echo, "application/json", `name=secret`, 400, "malformed-json"},
		{"truncated", echo, "application/json", `{"name":"secret`, 400, "malformed-json"},
		{"schema: too long", echo, "application/json", `{"name":"secret-secret-secret-secret"}`, 400, "invalid-request"},
		{"schema: wrong type", echo, "application/json", `{"name":"a","count":"secret"}`, 400, "invalid-request"},
		{"schema: below minimum", echo, "application/json", `{"name":"a","count":-1}`, 400, "invalid-request"},
		{"schema: missing required member", echo, "application/json", `{"count":1}`, 400, "invalid-request"},
		{"no body where one is required", echo, "application/json", ``, 400, "invalid-request"},
		{"a body of exactly the limit", echo, "application/json", padded(echoBodyLimit), 200, ""},
		{"a body one byte over the limit", echo, "application/json", padded(echoBodyLimit + 1), 413, "body-too-large"},
		{"a body over the server's limit", echo, "application/json", padded(MaxBodyBytes + 1), 413, "body-too-large"},
		{"raw: any JSON value", raw, "application/json", `[{"jsonrpc":"2.0","id":1},{"a":{"B":1,"b":2}}]`, 200, ""},
		{"raw: not JSON", raw, "text/plain", `{}`, 415, "unsupported-media-type"},
		{"raw: duplicate member", raw, "application/json", `{"jsonrpc":"2.0","id":1,"id":"secret"}`, 400, "duplicate-member"},
		{"raw: trailing data", raw, "application/json", `{} secret`, 400, "trailing-data"},
		{"raw: invalid UTF-8", raw, "application/json", "\"secret\xff\"", 400, "invalid-utf8"},
		{"raw: over its limit", raw, "application/json", padded(echoBodyLimit + 1), 413, "body-too-large"},
		{"handshake: valid declaration", handshake, "application/json", `{"agent":"secret-agent"}`, 200, ""},
		{"handshake: no body", handshake, "", ``, 200, ""},
		{"handshake: empty body with another type", handshake, "text/plain", ``, 415, "unsupported-media-type"},
		{"handshake: duplicate member", handshake, "application/json", `{"agent":"a","agent":"secret"}`, 400, "duplicate-member"},
		{"handshake: member differs in case", handshake, "application/json", `{"AGENT":"secret"}`, 400, "member-case"},
		{"handshake: unknown member", handshake, "application/json", `{"agent":"a","api_key":"secret"}`, 400, "unknown-member"},
		{"handshake: over its limit", handshake, "application/json", `{"agent":"` + strings.Repeat("x", handshakeBodyLimit) + `"}`, 413, "body-too-large"},
	}
	for _, tc := range tests {
		for _, listener := range []string{ps.main, ps.api} {
			t.Run(tc.desc, func(t *testing.T) {
				var header []string
				if tc.ctype != "" {
					header = []string{"Content-Type", tc.ctype}
				}
				resp, body := exchange(t, listener, "POST", request("POST", tc.path, tc.body, header...))
				if tc.slug == "" {
					if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
						t.Errorf("%d %s: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
					}
					checkCommonHeaders(t, resp, true)
					return
				}
				checkProblem(t, resp, body, tc.status, tc.slug)
			})
		}
	}

	t.Run("the problem says which member, never quoting the body", func(t *testing.T) {
		resp, body := exchange(t, ps.main, "POST", request("POST", echo, `{"name":"a","inner":{"label":"x","Label":"secret"}}`, "Content-Type", "application/json"))
		checkProblem(t, resp, body, 400, "member-case")
		var p struct {
			Detail string
			Errors []struct{ Location string }
		}
		json.Unmarshal(body, &p)
		if !strings.Contains(p.Detail, `"label"`) || len(p.Errors) != 1 || p.Errors[0].Location != "body.inner" {
			t.Errorf("detail %q, errors %+v", p.Detail, p.Errors)
		}
	})
}

func TestQueryParameters(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{})
	for _, tc := range []struct {
		query  string
		status int
		slug   string
	}{
		{"", 200, ""},
		{"?preimage=false", 200, ""},
		{"?preimage=true", 403, "metadata-only"},
		{"?preimage=false&preimage=true", 400, "repeated-parameter"},
		{"?preimage=true&preimage=false", 400, "repeated-parameter"},
		{"?description=false&description=true", 400, "repeated-parameter"},
		{"?preimage=false&Preimage=true", 400, "parameter-case"},
		{"?PREIMAGE=true", 400, "parameter-case"},
		{"?preimage=secret-token", 400, "invalid-request"},
		{"?other=1&other=2", 200, ""},
	} {
		t.Run(tc.query, func(t *testing.T) {
			resp, body := exchange(t, ps.main, "GET", request("GET", "/api/ledger/strict-table"+tc.query, ""))
			if tc.slug == "" {
				if resp.StatusCode != tc.status {
					t.Errorf("%d: %.200s", resp.StatusCode, body)
				}
				return
			}
			checkProblem(t, resp, body, tc.status, tc.slug)
		})
	}
}

func TestRateLimitsByOperation(t *testing.T) {
	t.Run("one budget per operation: path forms and both listeners share it", func(t *testing.T) {
		ps := startPipelineServer(t, Limit{4, time.Minute}, Options{})
		for i, target := range []string{"/api/v1/test-echo", "/API/V1/TEST-ECHO", "/api/v1/test-echo/", "/api/v1/Test-Echo//"} {
			addr := []string{ps.main, ps.api}[i%2]
			// Malformed requests count too.
			if resp, body := exchange(t, addr, "POST", request("POST", target, `{"name":1}`, "Content-Type", "application/json")); resp.StatusCode != 400 {
				t.Fatalf("request %d to %s: %d %.200s", i, target, resp.StatusCode, body)
			}
		}
		for _, addr := range []string{ps.main, ps.api} {
			resp, body := exchange(t, addr, "POST", request("POST", "/api/v1/test-echo", `{"name":"a"}`, "Content-Type", "application/json"))
			checkProblem(t, resp, body, 429, "rate-limited")
			if ra := resp.Header.Get("Retry-After"); ra != "15" {
				t.Errorf("Retry-After %q, want 15 (one request every 15 s)", ra)
			}
		}
		// Another operation has a budget of its own.
		if resp, body := exchange(t, ps.main, "POST", request("POST", "/api/v1/handshake", "")); resp.StatusCode != 200 {
			t.Errorf("handshake: %d %.200s", resp.StatusCode, body)
		}
	})
	t.Run("requests with a body to no route share one budget", func(t *testing.T) {
		ps := startPipelineServer(t, Limit{}, Options{PostLimit: Limit{3, time.Minute}})
		for i, tc := range []struct {
			method, target string
			status         int
		}{{"POST", "/api/nope", 404}, {"PUT", "/api/ledger/verify", 405}, {"POST", "/gate.html", 405}, {"DELETE", "/api/other", 429}} {
			resp, body := exchange(t, ps.main, tc.method, request(tc.method, tc.target, `{}`, "Content-Type", "application/json"))
			if resp.StatusCode != tc.status {
				t.Errorf("request %d, %s %s: %d %.200s", i, tc.method, tc.target, resp.StatusCode, body)
			}
		}
		if resp, _ := exchange(t, ps.main, "GET", request("GET", "/api/ledger/verify", "")); resp.StatusCode != 200 {
			t.Errorf("GET is unlimited: %d", resp.StatusCode)
		}
	})
	t.Run("spec limits are declared with their routes", func(t *testing.T) {
		for _, l := range []struct {
			got  Limit
			want string
		}{{ChatLimit, "20/1m0s"}, {PulseLimit, "5/1m0s"}, {VoiceLimit, "10/1m0s"}} {
			if l.got.String() != l.want {
				t.Errorf("%v, want %s", l.got, l.want)
			}
		}
	})
}

func TestMethods(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{PostLimit: Limit{1000, time.Minute}})
	for _, tc := range []struct {
		method, target string
		status         int
		allow          string
	}{
		{"OPTIONS", "/api/ledger/verify", 204, "GET, HEAD, OPTIONS"},
		{"OPTIONS", "/api/v1/handshake", 204, "GET, HEAD, POST, OPTIONS"},
		{"OPTIONS", "/API/Node/s1/", 204, "GET, HEAD, OPTIONS"},
		{"OPTIONS", "/gate.html", 204, staticAllow},
		{"OPTIONS", "/", 204, staticAllow},
		{"OPTIONS", "/api/nope", 404, ""},
		{"OPTIONS", "*", 204, "GET, HEAD, POST, OPTIONS"},
		{"DELETE", "/api/ledger/verify", 405, "GET, HEAD, OPTIONS"},
		{"POST", "/api/chain/status", 405, "GET, HEAD, OPTIONS"},
		{"TRACE", "/api/v1", 405, "GET, HEAD, OPTIONS"},
		{"PATCH", "/api/node/s1", 405, "GET, HEAD, OPTIONS"},
		{"GET", "/api/v1/test-echo", 405, "POST, OPTIONS"},
		{"GET", "/api/v1/test-raw", 405, "POST, OPTIONS"},
		{"HEAD", "/api/v1/test-echo", 405, "POST, OPTIONS"},
		{"PUT", "/gate.html", 405, staticAllow},
		{"POST", "/llms.txt", 405, staticAllow},
		{"DELETE", "/nope.html", 404, ""},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			resp, body := exchange(t, ps.main, tc.method, request(tc.method, tc.target, ""))
			if resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow {
				t.Errorf("%d, Allow %q; want %d, %q: %.200s", resp.StatusCode, resp.Header.Get("Allow"), tc.status, tc.allow, body)
			}
			checkCommonHeaders(t, resp, isAPIPath(tc.target))
			if tc.status == 405 && tc.method != "HEAD" {
				checkProblem(t, resp, body, 405, "method-not-allowed")
			}
		})
	}
	for _, method := range []string{"FOO", "PROPFIND", "BREW"} {
		t.Run("unknown method "+method, func(t *testing.T) {
			resp, body := exchange(t, ps.main, method, request(method, "/api/ledger/verify", ""))
			checkProblem(t, resp, body, 501, "not-implemented")
		})
	}
	t.Run("the API origin", func(t *testing.T) {
		resp, _ := exchange(t, ps.api, "OPTIONS", request("OPTIONS", "/api/v1/handshake", ""))
		if resp.StatusCode != 204 || resp.Header.Get("Allow") != "GET, HEAD, POST, OPTIONS" {
			t.Errorf("OPTIONS: %d %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
		resp, body := exchange(t, ps.api, "DELETE", request("DELETE", "/api/chain/latest", ""))
		checkProblem(t, resp, body, 405, "method-not-allowed")
	})
}

// Every GET route, live or static, answers HEAD with GET's status and
// headers and no body.
func TestHeadForEveryGet(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{})
	paths := []string{"/", "/gate.html", "/llms.txt", "/pages/", "/big.txt", "/nope.html", "/api/nope"}
	for _, e := range ps.srv.define(newApp(nil), false).catalog() {
		if e.Method == http.MethodGet && e.Kind == "live" {
			paths = append(paths, strings.ReplaceAll(e.Path, "{id}", "s1"))
		}
	}
	for _, addr := range []string{ps.main, ps.api} {
		for _, path := range paths {
			t.Run(path, func(t *testing.T) {
				get, getBody := exchange(t, addr, "GET", request("GET", path, ""))
				if addr == ps.api && get.StatusCode == 404 {
					return // not on the API origin
				}
				head, headBody := exchange(t, addr, "HEAD", request("HEAD", path, ""))
				if head.StatusCode != get.StatusCode || len(headBody) != 0 {
					t.Errorf("HEAD %d with %d bytes, GET %d", head.StatusCode, len(headBody), get.StatusCode)
				}
				if head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
					t.Errorf("Content-Type %q, GET %q", head.Header.Get("Content-Type"), get.Header.Get("Content-Type"))
				}
				// A live document is generated per request: only a static
				// file's length must match.
				if !isAPIPath(path) && head.ContentLength != int64(len(getBody)) {
					t.Errorf("Content-Length %d, GET body %d", head.ContentLength, len(getBody))
				}
				checkCommonHeaders(t, head, isAPIPath(path))
			})
		}
	}
}

// Errors fasthttp finds before routing are problems too, with the headers
// of every response, and quote nothing of the request.
func TestEarlyErrors(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{})
	for _, tc := range []struct {
		desc, raw string
		status    int
		slug      string
	}{
		{"garbage request line", "SECRET\r\n\r\n", 400, "bad-request"},
		{"header without a colon", "GET / HTTP/1.1\r\nHost: a\r\nX-Token secret-token\r\n\r\n", 400, "bad-request"},
		{"no Host", "GET /api/ledger/verify HTTP/1.1\r\nAuthorization: secret\r\n\r\n", 400, "bad-request"},
		{"empty Host", "GET /api/ledger/verify HTTP/1.1\r\nHost:\r\n\r\n", 400, "bad-request"},
		{"headers too large", "GET / HTTP/1.1\r\nHost: a\r\nCookie: secret=" + strings.Repeat("s", readBufferSize) + "\r\n\r\n", 431, "headers-too-large"},
		{"request line too large", "GET /" + strings.Repeat("secret", readBufferSize/6) + " HTTP/1.1\r\nHost: a\r\n\r\n", 431, "headers-too-large"},
		{"declared body over the server's limit", fmt.Sprintf("POST /api/nope HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", MaxBodyBytes+1), 413, "body-too-large"},
		{"declared body over the route's limit", fmt.Sprintf("POST /api/v1/test-echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", echoBodyLimit+1), 413, "body-too-large"},
		{"chunked body over the route's limit", fmt.Sprintf("POST /api/v1/test-echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
			echoBodyLimit+1, strings.Repeat(" ", echoBodyLimit+1)), 413, "body-too-large"},
		{"bad Content-Length", "POST /api/v1/test-echo HTTP/1.1\r\nHost: a\r\nContent-Length: secret\r\n\r\n", 400, "bad-request"},
		{"bad chunk", "POST /api/v1/handshake HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nsecret\r\n", 400, "bad-request"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			rc := dial(t, ps.main)
			rc.send(tc.raw)
			resp, body := rc.response("GET")
			checkProblem(t, resp, body, tc.status, tc.slug)
			if closed, _ := rc.closed(5 * time.Second); !resp.Close && !closed {
				t.Error("the connection stays open after a request that could not be read")
			}
		})
	}
	t.Run("HTTP/1.0 needs no Host", func(t *testing.T) {
		resp, body := exchange(t, ps.main, "GET", "GET /api/ledger/verify HTTP/1.0\r\n\r\n")
		if resp.StatusCode != 200 {
			t.Errorf("%d %.200s", resp.StatusCode, body)
		}
	})
	t.Run("a malformed parameter is not quoted", func(t *testing.T) {
		resp, body := exchange(t, ps.main, "GET", request("GET", "/api/node/secret-token", ""))
		checkProblem(t, resp, body, 404, "not-found")
	})
}

func TestTimeouts(t *testing.T) {
	const read, idle = 300 * time.Millisecond, 400 * time.Millisecond
	ps := startPipelineServer(t, Limit{}, Options{ReadTimeout: read, IdleTimeout: idle, WriteTimeout: time.Second})
	// Generous bounds: a busy machine is slow, a missing timeout is never.
	const bound = 5 * time.Second
	for _, tc := range []struct{ desc, partial string }{
		{"nothing sent", ""},
		{"half a request line", "GET /api/ledger/ver"},
		{"half the headers", "GET /api/ledger/verify HTTP/1.1\r\nHost: a\r\nAccept: appl"},
		{"half a body", "POST /api/v1/handshake HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"agent\":"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			rc := dial(t, ps.main)
			rc.send(tc.partial)
			start := time.Now()
			closed, sent := rc.closed(bound)
			if !closed {
				t.Fatalf("still open after %s", bound)
			}
			if took := time.Since(start); took < read/2 {
				t.Errorf("closed after %s, before the read timeout", took)
			}
			if len(sent) > 0 { // a 408 as a problem, or nothing
				resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(sent)), nil)
				if err != nil {
					t.Fatalf("%v: %q", err, sent)
				}
				body, _ := io.ReadAll(resp.Body)
				checkProblem(t, resp, body, 408, "request-timeout")
			}
		})
	}
	t.Run("a slow request answered in time is served", func(t *testing.T) {
		rc := dial(t, ps.main)
		rc.send("GET /api/ledger/verify HTTP/1.1\r\n")
		time.Sleep(read / 4)
		rc.send("Host: a\r\n\r\n")
		if resp, _ := rc.response("GET"); resp.StatusCode != 200 {
			t.Errorf("%d", resp.StatusCode)
		}
	})
	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		rc := dial(t, ps.main)
		rc.send(request("GET", "/api/ledger/verify", ""))
		if resp, _ := rc.response("GET"); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("%d, close %v", resp.StatusCode, resp.Close)
		}
		if closed, sent := rc.closed(bound); !closed || len(sent) > 0 {
			t.Errorf("closed %v, after sending %q", closed, sent)
		}
	})
}

func TestExpectContinue(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{})
	expect := func(ctype string, length int) string {
		return fmt.Sprintf("POST /api/v1/test-echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, length)
	}
	t.Run("a body the route takes gets 100 Continue", func(t *testing.T) {
		rc := dial(t, ps.main)
		body := `{"name":"a"}`
		rc.send(expect("application/json", len(body)))
		if resp, _ := rc.response("POST"); resp.StatusCode != 100 {
			t.Fatalf("%d, want 100 Continue", resp.StatusCode)
		}
		rc.send(body)
		if resp, b := rc.response("POST"); resp.StatusCode != 200 {
			t.Errorf("%d %.200s", resp.StatusCode, b)
		}
	})
	for _, tc := range []struct {
		desc, ctype string
		length      int
		status      int
		slug        string
	}{
		{"too long for the route", "application/json", echoBodyLimit + 1, 413, "body-too-large"},
		{"too long for the server", "application/json", MaxBodyBytes + 1, 413, "body-too-large"},
		{"not JSON", "text/plain", 10, 415, "unsupported-media-type"},
		{"not JSON, one byte", "text/plain", 1, 415, "unsupported-media-type"},
	} {
		t.Run(tc.desc+": refused before 100 Continue", func(t *testing.T) {
			rc := dial(t, ps.main)
			rc.send(expect(tc.ctype, tc.length))
			if tc.length == 1 {
				rc.send("x") // a client that stops waiting for 100
			}
			resp, body := rc.response("POST")
			checkProblem(t, resp, body, tc.status, tc.slug)
		})
	}
}

func TestPipelinedRequests(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{})
	rc := dial(t, ps.main)
	rc.send(request("GET", "/api/ledger/verify", "") +
		request("POST", "/api/v1/test-echo", `{"name":"b","name":"c"}`, "Content-Type", "application/json") +
		request("POST", "/api/v1/test-echo", `{"name":"d"}`, "Content-Type", "application/json") +
		request("HEAD", "/gate.html", ""))
	for i, want := range []struct {
		method string
		status int
	}{{"GET", 200}, {"POST", 400}, {"POST", 200}, {"HEAD", 200}} {
		resp, body := rc.response(want.method)
		if resp.StatusCode != want.status {
			t.Errorf("response %d: %d, want %d: %.200s", i, resp.StatusCode, want.status, body)
		}
	}
}

func TestShutdown(t *testing.T) {
	t.Run("idle and unused connections do not hold it", func(t *testing.T) {
		ps := startPipelineServer(t, Limit{}, Options{ReadTimeout: time.Minute, IdleTimeout: time.Minute})
		keepAlive := dial(t, ps.main)
		keepAlive.send(request("GET", "/api/ledger/verify", ""))
		if resp, _ := keepAlive.response("GET"); resp.StatusCode != 200 {
			t.Fatal(resp.StatusCode)
		}
		keepAliveAPI := dial(t, ps.api)
		keepAliveAPI.send(request("GET", "/api/v1", ""))
		keepAliveAPI.response("GET")
		unused := dial(t, ps.main)
		time.Sleep(50 * time.Millisecond) // accepted
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ps.srv.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		for _, rc := range []*rawConn{keepAlive, keepAliveAPI, unused} {
			if closed, _ := rc.closed(time.Second); !closed {
				t.Error("a connection is still open after Shutdown")
			}
		}
	})
	t.Run("a response in flight says Connection: close", func(t *testing.T) {
		ps := startPipelineServer(t, Limit{}, Options{})
		rc := dial(t, ps.main)
		rc.send(request("GET", "/api/v1", "")) // a keep-alive connection
		rc.response("GET")
		rc.send(request("POST", "/api/v1/test-slow", ""))
		<-ps.entered
		done := make(chan error, 1)
		go func() { done <- ps.srv.Shutdown(context.Background()) }()
		time.Sleep(200 * time.Millisecond) // Shutdown has begun
		close(ps.release)
		resp, body := rc.response("POST")
		if resp.StatusCode != 200 || !resp.Close {
			t.Errorf("%d, Connection %q: %s", resp.StatusCode, resp.Header.Get("Connection"), body)
		}
		if err := <-done; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	t.Run("Serve and ServeAPI racing Shutdown", func(t *testing.T) {
		srv := newTestServer(t, Options{Chain: testChain(t)})
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, serve := range []func(net.Listener) error{srv.Serve, srv.ServeAPI} {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { errs <- serve(ln) })
		}
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		wg.Wait() // both return
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		}
	})
}

// A POST operation registered without Post would skip the pipeline: the
// definition refuses it.
func TestPostRoutesGoThroughThePipeline(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "live.Post") {
			t.Errorf("recovered %v", r)
		}
	}()
	s := &Server{site: testSite(), opts: Options{testRoutes: func(d *definition) {
		huma.Register(d.v1, huma.Operation{OperationID: "bypass", Method: http.MethodPost, Path: "/api/v1/bypass"},
			func(context.Context, *echoInput) (*reply[echoed], error) { return nil, nil })
	}}}
	s.define(newApp(nil), false)
}

// The route table agrees with fiber's routing on the paths of the POST
// routes: where the pipeline's rules apply before routing, the operation
// answers after it.
func TestRouteTableMatchesRouting(t *testing.T) {
	ps := startPipelineServer(t, Limit{}, Options{PostLimit: Limit{1000, time.Minute}})
	table := newRouteTable(ps.srv.define(newApp(nil), false))
	for _, target := range []string{
		"/api/v1/test-echo", "/API/V1/TEST-ECHO", "/api/v1/test-echo/", "/api/v1/test-echo//", "//api/v1/test-echo",
		"/api/v1/test-echo/x", "/api/v1/%74est-echo", "/api/v1/test-echo?x=1", "/api/v1/test-ech", "/api/v1/test-echo.json",
		"/api/v1/t\u212Aest-echo",
	} {
		t.Run(target, func(t *testing.T) {
			rule := table.postRule(headerOf(t, "POST", target))
			resp, body := exchange(t, ps.main, "POST", request("POST", target, `{"name":"a"}`, "Content-Type", "application/json"))
			routed := resp.StatusCode == 200
			if (rule != nil) != routed {
				t.Errorf("table %v, routing %d: %.200s", rule != nil, resp.StatusCode, body)
			}
		})
	}
}

// match answers literal paths from a map: it returns what trying every
// route in order returns, for every defined path and variants of it.
func TestRouteTableMapAgreesWithScan(t *testing.T) {
	srv, _ := newAIServer(t, aiSetup{})
	table := newRouteTable(srv.define(newApp(nil), false))
	var paths []string
	for path := range srv.define(newApp(nil), false).paths() {
		concrete := strings.NewReplacer("{", "", "}", "").Replace(path)
		paths = append(paths, path, concrete, strings.ToUpper(concrete), concrete+"/", concrete+"/x", concrete[:len(concrete)-1],
			"/"+concrete, strings.ReplaceAll(concrete, "/", "//"), "/api/"+strings.Repeat("a", 200))
	}
	if len(paths) < 100 {
		t.Fatalf("only %d paths", len(paths))
	}
	for _, p := range paths {
		trimmed := bytes.TrimRight([]byte(p), "/")
		var want *tableRoute
		if len(trimmed) > 0 && trimmed[0] == '/' {
			want = table.scan(trimmed)
		}
		if got := table.match([]byte(p)); got != want {
			t.Errorf("%s: match %v, scan %v", p, got, want)
		}
	}
}

func TestDescriptionsDocumentThePipeline(t *testing.T) {
	_, v1, err := Documents(*testSite())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info  struct{ Description string }
		Paths map[string]map[string]struct {
			Responses    map[string]json.RawMessage `json:"responses"`
			MaxBodyBytes int                        `json:"x-max-body-bytes"`
		}
		Components struct {
			Schemas map[string]struct {
				AdditionalProperties *bool `json:"additionalProperties"`
			}
		}
	}
	if err := json.Unmarshal(v1, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			// 422 only where a well-formed request fails a semantic check.
			if op.Responses["422"] != nil && path != "/api/agent/receipt" {
				t.Errorf("%s %s documents 422 for malformed input", method, path)
			}
		}
	}
	if doc.Paths["/api/agent/receipt"]["post"].Responses["422"] == nil {
		t.Error("POST /api/agent/receipt does not document its 422")
	}
	post := doc.Paths["/api/v1/handshake"]["post"]
	for _, code := range []string{"400", "413", "415", "429"} {
		if post.Responses[code] == nil {
			t.Errorf("POST /api/v1/handshake documents no %s", code)
		}
	}
	if post.MaxBodyBytes != handshakeBodyLimit {
		t.Errorf("x-max-body-bytes %d", post.MaxBodyBytes)
	}
	if ap := doc.Components.Schemas["Declaration"].AdditionalProperties; ap == nil || *ap {
		t.Error("Declaration allows other members")
	}
	if !strings.Contains(doc.Info.Description, "answered 400") {
		t.Errorf("description: %q", doc.Info.Description)
	}
}

// A request whose body fails to arrive is reset by fasthttp before
// serverError runs: bodyReads keeps its route's rule for the connection
// that sent it, and for no other.
func TestBodyReads(t *testing.T) {
	var b bodyReads
	rule := &postRule{PostRoute: PostRoute{MaxBodyBytes: 10}}
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, nil, nil)
	b.start(&ctx.Request.Header, rule)
	if got := b.end(&ctx); got != rule {
		t.Errorf("end: %v, want the rule", got)
	}
	if got := b.end(&ctx); got != nil {
		t.Errorf("end twice: %v", got)
	}
	b.start(&ctx.Request.Header, rule) // a connection that closed mid-body
	time.Sleep(time.Millisecond)
	ctx.Init(&fasthttp.Request{}, nil, nil) // the context serves a new one
	if got := b.end(&ctx); got != nil {
		t.Errorf("a rule left by another connection: %v", got)
	}
	for range 1000 { // contexts that die leave no entry behind
		var dead fasthttp.RequestCtx
		b.start(&dead.Request.Header, rule)
	}
	runtime.GC()
	b.sweepAt = len(b.m) // the next start sweeps
	b.start(&ctx.Request.Header, rule)
	if n := len(b.m); n > 200 {
		t.Errorf("%d entries after a sweep", n)
	}
}

func headerOf(t *testing.T, method, target string) *fasthttp.RequestHeader {
	t.Helper()
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: a\r\n\r\n"))); err != nil {
		t.Fatal(err)
	}
	return &h
}

// The write timeout bounds a response, but the watch-mode event stream is
// one long response: it extends its deadline with every write.
func TestReloadStreamOutlivesWriteTimeout(t *testing.T) {
	hub := reload.New()
	srv := newTestServer(t, Options{Reload: hub, WriteTimeout: 200 * time.Millisecond})
	rc := dial(t, listenLoopback(t, srv.Serve))
	rc.send(request("GET", ReloadPrefix+"/events", ""))
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	time.Sleep(600 * time.Millisecond) // past the write timeout
	hub.Publish(reload.Build([]string{"gate.html"}))
	line := ""
	for !strings.Contains(line, "gate.html") {
		b, err := rc.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v (last line %q)", err, line)
		}
		line = b
	}
}
