package live

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Default timeouts (Options).
const (
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
)

// readBufferSize bounds a request's line and headers: more is 431.
const readBufferSize = 16 << 10

// harden sets what fiber's configuration does not reach on a listener's
// fasthttp server: errors found while reading a request are answered as
// problems, body rules apply before the body is read (routeTable), a
// response during shutdown says Connection: close, and requests are
// screened before routing (front).
func (s *Server) harden(srv *fasthttp.Server, t *routeTable) {
	srv.ErrorHandler = t.serverError
	srv.HeaderReceived = t.headerReceived
	srv.CloseOnShutdown = true
	srv.Logger = fasthttpLogger{s.log}
	srv.Handler = front(srv.Handler, t)
}

// front screens a request before fiber sees it: a method fiber does not
// know is 501 (fiber would answer in plain text), an HTTP/1.1 request
// without Host is 400 (RFC 9112 section 3.2), and OPTIONS * is answered
// for the whole server. Refusals are in the format of the route the path
// names (t.send).
func front(next fasthttp.RequestHandler, t *routeTable) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h := &ctx.Request.Header
		if h.ContentLength() != 0 {
			t.reading.end(ctx) // the body was read: forget its route (bodyReads)
		}
		if !h.IsGet() && !knownMethod(h.Method()) {
			t.send(ctx, statusProblem(http.StatusNotImplemented, "this server implements GET, HEAD, POST and OPTIONS"))
			return
		}
		if h.IsHTTP11() && len(h.Host()) == 0 {
			t.send(ctx, statusProblem(http.StatusBadRequest, "an HTTP/1.1 request must carry a Host header"))
			ctx.SetConnectionClose()
			return
		}
		if h.IsOptions() && string(h.RequestURI()) == "*" {
			putCommonHeaders(&ctx.Response.Header)
			ctx.Response.Header.Set(fasthttp.HeaderAllow, "GET, HEAD, POST, OPTIONS")
			ctx.SetStatusCode(http.StatusNoContent)
			return
		}
		next(ctx)
	}
}

// knownMethod reports the methods fiber routes.
func knownMethod(m []byte) bool {
	switch string(m) {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch:
		return true
	}
	return false
}

// serverError answers a request fasthttp could not read: its line or
// headers too large (431), not received in time (408), a body over the
// limit or refused by its headers before 100 Continue (see
// headerReceived), or anything malformed (400), in the format of the
// route the path names when the request line could be read. It never
// quotes the request: fasthttp's and fiber's messages do.
func (t *routeTable) serverError(ctx *fasthttp.RequestCtx, err error) {
	rule := t.postRule(&ctx.Request.Header)
	if read := t.reading.end(ctx); read != nil {
		rule = read // reading the body failed, and the request was reset
	}
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	var p = statusProblem(http.StatusBadRequest, "the request is not well-formed HTTP/1.1")
	switch {
	case errors.As(err, &small):
		p = statusProblem(http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("the request line and headers exceed %d bytes", readBufferSize))
	case errors.As(err, &netErr) && netErr.Timeout():
		p = statusProblem(http.StatusRequestTimeout, "the request was not received in time")
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		p = statusProblem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the server reads at most %d bytes of body", MaxBodyBytes))
		if rule != nil {
			p = tooLarge(rule)
			if refusal := checkBody(ctx.Request.Header.ContentType(), ctx.Request.Header.ContentLength(), rule); refusal != nil {
				p = refusal
			}
		}
	}
	if rule != nil {
		refuse(ctx, p, rule.refuse)
		return
	}
	t.send(ctx, p)
}

// fasthttpLogger passes fasthttp's messages (connections that failed) to
// the server's logger.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug("http connection", "msg", fmt.Sprintf(format, args...))
}

// connSet tracks a server's connections, so that Shutdown closes those
// that never sent a byte: fasthttp waits for them as for a request in
// flight (it closes idle keep-alive connections itself).
type connSet struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func (s *connSet) listen(ln net.Listener) *trackedListener {
	return &trackedListener{Listener: ln, set: s}
}

func (s *connSet) add(c *trackedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[*trackedConn]struct{}{}
	}
	s.conns[c] = struct{}{}
}

func (s *connSet) remove(c *trackedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// closeUnused closes the connections that have not sent a byte.
func (s *connSet) closeUnused() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.used.Load() {
			c.Conn.Close()
		}
	}
}

// trackedListener adds its connections to a connSet. Closing it twice is
// not an error: Shutdown closes it, and fasthttp again.
type trackedListener struct {
	net.Listener
	set  *connSet
	once sync.Once
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, set: l.set}
	l.set.add(tc)
	return tc, nil
}

func (l *trackedListener) Close() error {
	var err error
	l.once.Do(func() { err = l.Listener.Close() })
	return err
}

type trackedConn struct {
	net.Conn
	set  *connSet
	used atomic.Bool // a byte has been read
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.used.Load() {
		c.used.Store(true)
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.set.remove(c)
	return c.Conn.Close()
}
