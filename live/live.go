// Package live is the live edge: one fiber server that serves the built
// site from memory and answers the request-time routes from the chain.
//
//	srv, err := live.New(live.Options{PublicDir: "public", Site: site, Chain: store})
//	go srv.Serve(ln)
//	defer srv.Shutdown(ctx)
//
// Every live route is defined once, with typed requests and responses, on
// huma: the same definition routes, validates, answers errors as RFC 9457
// problem JSON and produces the two OpenAPI descriptions (Documents). Every
// live JSON response carries a request-time generated_at and
// Cache-Control: no-store.
package live

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/mcp"
	"github.com/proofsite/proofsite/live/reload"
)

// Options configure a Server.
type Options struct {
	// PublicDir is the built site to serve; required.
	PublicDir string
	// Site is what the organisation publishes; required with Chain.
	Site *Site
	// Chain is the ledger. Without it only the static site (and Reload) is
	// served: the editor's preview in watch mode.
	Chain Chain
	// Reload, when set, mounts the watch-mode reload routes.
	Reload *reload.Hub
	// TrustedProxies are the addresses or CIDR prefixes of reverse proxies
	// whose X-Forwarded-For is believed; empty trusts none.
	TrustedProxies []string
	// Limits override DefaultLimits per POST path.
	Limits map[string]Limit
	// PostLimit limits POST routes without a limit of their own; the zero
	// value means DefaultPostLimit.
	PostLimit Limit
	// PulseEvery is the worker heartbeat interval (see Health); 0 means 30 s.
	PulseEvery time.Duration
	// Pulse is called on every heartbeat, e.g. to run a scheduled full walk.
	Pulse func(context.Context)
	// Version is reported by /api/health.
	Version string
	// Logger receives request errors and reloads; nil discards.
	Logger *slog.Logger
}

// ReloadPrefix is where a reload hub's routes are mounted; pages built for
// watch mode load their script from here.
const ReloadPrefix = "/__proofsite"

// Server is the live edge.
type Server struct {
	opts     Options
	site     *Site
	chain    Chain
	app      *fiber.App
	apiApp   *fiber.App // the API origin's listener, made by ServeAPI
	static   *staticSite
	clientIP *clientIPs
	log      *slog.Logger

	verdictJSON docMemo[ledger.Verdict] // /api/ledger/verify's document
	statusJSON  docMemo[ChainState]     // /api/chain/status's document

	started   time.Time
	pulses    atomic.Int64
	lastPulse atomic.Pointer[time.Time]
	stop      context.CancelFunc
}

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if opts.PublicDir == "" {
		return nil, errors.New("live: PublicDir is required")
	}
	if opts.Chain != nil && opts.Site == nil {
		return nil, errors.New("live: Site is required with Chain")
	}
	if opts.PulseEvery <= 0 {
		opts.PulseEvery = 30 * time.Second
	}
	if opts.PostLimit.Max <= 0 || opts.PostLimit.Window <= 0 {
		opts.PostLimit = DefaultPostLimit
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ips, err := newClientIPs(opts.TrustedProxies)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, site: opts.Site, chain: opts.Chain, clientIP: ips, log: log, started: time.Now().UTC()}
	s.static, err = newStaticSite(opts.PublicDir, func(err error) { log.Error("reloading the site", "err", err) })
	if err != nil {
		return nil, err
	}
	s.app = s.newApp(false)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	if s.chain != nil {
		go s.heartbeat(ctx)
	}
	return s, nil
}

// newApp returns a fiber app with the shared error handling; s may be nil
// when only the route definition is wanted (Documents, Endpoints).
func newApp(s *Server) *fiber.App {
	handle := func(c *fiber.Ctx, err error) error { return handleError(c, err, nil) }
	if s != nil {
		handle = func(c *fiber.Ctx, err error) error { return handleError(c, err, s.log) }
	}
	return fiber.New(fiber.Config{
		AppName:               "proofsite",
		DisableStartupMessage: true,
		ErrorHandler:          handle,
		BodyLimit:             MaxBodyBytes,
		ReadBufferSize:        16 << 10,
		// A page and its headers leave in one write: with fasthttp's 4 KB
		// default, a 10 KB page took two write syscalls.
		WriteBufferSize: 16 << 10,
	})
}

// newApp builds the main listener's app, or with apiOnly the API origin's.
func (s *Server) newApp(apiOnly bool) *fiber.App {
	app := newApp(s)
	app.Use(securityHeaders)
	app.Use("/api", noStore)
	if s.opts.Reload != nil && !apiOnly {
		s.opts.Reload.Register(app, ReloadPrefix)
	}
	if s.chain != nil {
		limited := map[string]fiber.Handler{}
		app.Use(func(c *fiber.Ctx) error {
			if h := limited[c.Path()]; h != nil && c.Method() == fiber.MethodPost {
				return h(c)
			}
			return c.Next()
		})
		d := s.define(app, apiOnly)
		for path, item := range d.paths() {
			if item.Post != nil && !mcp.IsEndpoint(path) { // MCP requests are reads, unlimited like GETs
				l, ok := s.opts.Limits[path]
				if !ok {
					if l, ok = DefaultLimits[path]; !ok {
						l = s.opts.PostLimit
					}
				}
				limited[path] = s.rateLimit(l)
			}
		}
	}
	if !apiOnly {
		app.Use(s.static.serve)
	}
	return app
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(ln) }

// ServeAPI answers the API origin's routes (/api/v1/*, /api/chain/latest)
// on a second listener until Shutdown.
func (s *Server) ServeAPI(ln net.Listener) error {
	if s.chain == nil {
		return errors.New("live: the API origin needs a chain")
	}
	s.apiApp = s.newApp(true)
	return s.apiApp.Listener(ln)
}

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	if s.opts.Reload != nil {
		s.opts.Reload.Close()
	}
	var errs []error
	if s.apiApp != nil {
		errs = append(errs, s.apiApp.ShutdownWithContext(ctx))
	}
	errs = append(errs, s.app.ShutdownWithContext(ctx))
	return errors.Join(errs...)
}

// SiteChanged re-reads the given output paths after an incremental build.
func (s *Server) SiteChanged(paths []string) error { return s.static.Update(paths) }

// SiteReplaced reloads the whole site after a full build.
func (s *Server) SiteReplaced() error { return s.static.reload() }

// heartbeat is the worker's pulse: it counts itself for /api/health and
// runs the scheduled work it was given.
func (s *Server) heartbeat(ctx context.Context) {
	t := time.NewTicker(s.opts.PulseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.opts.Pulse != nil {
				s.opts.Pulse(ctx)
			}
			now := time.Now().UTC()
			s.lastPulse.Store(&now)
			s.pulses.Add(1)
		}
	}
}

func securityHeaders(c *fiber.Ctx) error {
	nosniffHeader.set(c)
	referrerPolicyHeader.set(c)
	frameDenyHeader.set(c)
	return c.Next()
}

// noStore marks every API response, errors included, as not cacheable: it
// is true only at the moment it was generated.
func noStore(c *fiber.Ctx) error {
	noStoreHeader.set(c)
	return c.Next()
}

// handleError answers every error that reaches fiber: problem JSON for API
// paths, the status and a line of text for pages.
func handleError(c *fiber.Ctx, err error, log *slog.Logger) error {
	status := http.StatusInternalServerError
	detail := ""
	var fe *fiber.Error
	if errors.As(err, &fe) {
		status = fe.Code
		if fe.Message != http.StatusText(fe.Code) {
			detail = fe.Message
		}
	}
	if status >= 500 {
		if log != nil {
			log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
		}
		detail = "" // never show internals
	}
	if mcp.IsEndpoint(c.Path()) {
		return mcp.WriteHTTPError(c, status, detail)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	if !isAPIPath(c.Path()) && status == http.StatusNotFound {
		c.Set(fiber.HeaderContentType, "text/plain; charset=utf-8")
		return c.Status(status).SendString("404 page not found")
	}
	return writeProblem(c, status, detail)
}

func isAPIPath(p string) bool {
	return strings.HasPrefix(p, "/api/") || p == "/api" || p == "/mcp"
}

// writeProblem writes an RFC 9457 problem document.
func writeProblem(c *fiber.Ctx, status int, detail string) error {
	body := map[string]any{"type": problemType(status), "title": http.StatusText(status), "status": status, "instance": c.Path()}
	if detail != "" {
		body["detail"] = detail
	}
	return c.Status(status).JSON(body, "application/problem+json")
}
