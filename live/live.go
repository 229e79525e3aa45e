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
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/reload"
	"github.com/proofsite/proofsite/live/towns"
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
	// Appender, when set, lets routes append to the chain; without it the
	// live edge only reads. Nothing appends yet.
	Appender Appender
	// AI, when set with Chain, serves the AI routes: chat, pulse, voice,
	// the airlock (/api/ember, /api/lumen), /api/v1/query and
	// /api/agent/receipt.
	AI *AI
	// Memory serves the memory routes (/api/memory/*); without it they
	// answer 503.
	Memory MemoryStore
	// MemoryTokens authorize POST /api/memory/store; the zero value
	// accepts no token.
	MemoryTokens MemoryTokens
	// Towns serves the town routes (/api/v1/towns/*); without it they
	// answer 503.
	Towns *towns.Towns
	// Eval, when set, serves the evaluation routes of the verification API
	// (evaluate, govern, certify, compliance, telemetry); without it they
	// are not routes, and discover says so.
	Eval *Evaluation
	// Publisher signs the chain's checkpoints and writes its export; without
	// it signed_checkpoint is null and /api/ledger/export answers 503.
	Publisher Publisher
	// TilesDir is the chain's C2SP tlog-tiles folder (ledger/tiles), served
	// under TilesPrefix; empty serves the copy the build published in
	// PublicDir/ledger, if any.
	TilesDir string
	// Reload, when set, mounts the watch-mode reload routes.
	Reload *reload.Hub
	// TrustedProxies are the addresses or CIDR prefixes of reverse proxies
	// whose X-Forwarded-For is believed; empty trusts none.
	TrustedProxies []string
	// Limits override the per-client rate of POST routes, by the path
	// they are registered with (e.g. "/api/chat").
	Limits map[string]Limit
	// PostLimit limits POST routes without a limit of their own, and
	// requests with a body to paths that are not routes; the zero value
	// means DefaultPostLimit.
	PostLimit Limit
	// ReadTimeout bounds the reading of one request, line, headers and
	// body, from its first byte (from the connection's opening for the
	// first request); 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of one response; 0 means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// PulseEvery is the worker heartbeat interval (see Health); 0 means 30 s.
	PulseEvery time.Duration
	// Pulse is called on every heartbeat, e.g. to run a scheduled full walk.
	Pulse func(context.Context)
	// Version is reported by /api/health.
	Version string
	// Logger receives request errors and reloads; nil discards.
	Logger *slog.Logger

	// testRoutes registers routes for the tests, as the definition's own
	// are registered.
	testRoutes func(d *definition)
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
	apiApp   *fiber.App // the API origin's listener; nil without a chain
	static   *staticSite
	tiles    *tileCache // the log's files (tileDir)
	clientIP *clientIPs
	limiter  *rateLimiter // shared by both listeners
	ai       *aiEdge      // nil without Options.AI
	// evalTurns admits evaluations (Evaluation.Concurrency); nil without
	// Options.Eval or without a bound.
	evalTurns turns
	evalFasts []*evalFast // POST /api/v1/evaluate's fast paths, one a listener
	log       *slog.Logger

	mu        sync.Mutex
	closed    bool // Shutdown has begun
	listeners []*trackedListener
	conns     connSet

	verdictJSON docMemo[ledger.Verdict] // /api/ledger/verify's document
	statusJSON  docMemo[ChainState]     // /api/chain/status's document

	started   time.Time
	pulses    atomic.Int64
	lastPulse atomic.Pointer[time.Time]
	stop      context.CancelFunc

	// describing: the definition describes the live edge as cmd wires it
	// (Documents, Endpoints, Answers), every optional route included.
	describing bool
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
	if !opts.PostLimit.valid() {
		opts.PostLimit = DefaultPostLimit
	}
	opts.ReadTimeout = cmp.Or(opts.ReadTimeout, DefaultReadTimeout)
	opts.WriteTimeout = cmp.Or(opts.WriteTimeout, DefaultWriteTimeout)
	opts.IdleTimeout = cmp.Or(opts.IdleTimeout, DefaultIdleTimeout)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ips, err := newClientIPs(opts.TrustedProxies)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, site: opts.Site, chain: opts.Chain, clientIP: ips, limiter: newRateLimiter(), log: log, started: time.Now().UTC()}
	s.tiles = newTileCache(s.tileDir())
	if opts.Eval != nil {
		s.evalTurns = newTurns(opts.Eval.Concurrency)
	}
	if opts.AI != nil {
		if s.ai, err = newAIEdge(opts.AI, log); err != nil {
			return nil, err
		}
		s.ai.writeTimeout = opts.WriteTimeout
	}
	s.static, err = newStaticSite(opts.PublicDir, func(err error) { log.Error("reloading the site", "err", err) })
	if err != nil {
		return nil, err
	}
	s.app = s.newApp(false)
	if s.chain != nil {
		s.apiApp = s.newApp(true)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	if s.chain != nil {
		go s.heartbeat(ctx)
	}
	return s, nil
}

// newApp returns a fiber app with the shared error handling and limits;
// s is nil when only the route definition is wanted (Documents,
// Endpoints).
func newApp(s *Server) *fiber.App {
	cfg := fiber.Config{
		AppName:               "proofsite",
		DisableStartupMessage: true,
		ErrorHandler:          func(c *fiber.Ctx, err error) error { return handleError(c, err, nil) },
		BodyLimit:             MaxBodyBytes,
		ReadBufferSize:        readBufferSize,
		// A page and its headers leave in one write: with fasthttp's 4 KB
		// default, a 10 KB page took two write syscalls.
		WriteBufferSize: 16 << 10,
		// No route takes a form: never parse one (or spool it to disk).
		DisablePreParseMultipartForm: true,
	}
	if s != nil {
		cfg.ErrorHandler = func(c *fiber.Ctx, err error) error { return handleError(c, err, s.log) }
		cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout = s.opts.ReadTimeout, s.opts.WriteTimeout, s.opts.IdleTimeout
	}
	return fiber.New(cfg)
}

// newApp builds the main listener's app, or with apiOnly the API origin's.
func (s *Server) newApp(apiOnly bool) *fiber.App {
	app := newApp(s)
	app.Use(guard)
	app.Use("/api", noStore)
	if s.opts.Reload != nil && !apiOnly {
		s.opts.Reload.Register(app, ReloadPrefix)
	}
	table := &routeTable{}
	if s.chain != nil {
		table = newRouteTable(s.define(app, apiOnly))
	}
	if apiOnly {
		// The API origin's own address leads to its root.
		app.Get("/", func(c *fiber.Ctx) error {
			c.Location("/api/v1")
			c.Set(fiber.HeaderContentType, "text/plain; charset=utf-8")
			return c.Status(fiber.StatusPermanentRedirect).SendString("The API origin's root is /api/v1\n")
		})
	}
	app.Use(s.fallback(table, apiOnly))
	s.harden(app.Server(), table)
	return app
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.serve(s.app, ln) }

// ServeAPI answers the API origin's routes (/api/v1/*, /api/chain/latest)
// on a second listener until Shutdown. Both listeners share the rate
// limits.
func (s *Server) ServeAPI(ln net.Listener) error {
	if s.apiApp == nil {
		return errors.New("live: the API origin needs a chain")
	}
	return s.serve(s.apiApp, ln)
}

func (s *Server) serve(app *fiber.App, ln net.Listener) error {
	tl := s.conns.listen(ln)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ln.Close()
	}
	s.listeners = append(s.listeners, tl)
	s.mu.Unlock()
	return app.Listener(tl)
}

// Shutdown stops accepting requests and waits for those in flight; a
// response written meanwhile says Connection: close. Idle keep-alive
// connections and connections that never sent a request are closed at
// once. Serve and ServeAPI return nil.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	if s.opts.Reload != nil {
		s.opts.Reload.Close()
	}
	s.mu.Lock()
	s.closed = true
	listeners := s.listeners
	s.mu.Unlock()
	for _, ln := range listeners {
		ln.Close() // at once, so that a Serve racing with Shutdown ends too
	}
	s.conns.closeUnused()
	apps := []*fiber.App{s.app}
	if s.apiApp != nil {
		apps = append(apps, s.apiApp)
	}
	errs := make([]error, len(apps))
	var wg sync.WaitGroup
	for i, app := range apps {
		wg.Go(func() { errs[i] = app.ShutdownWithContext(ctx) })
	}
	wg.Wait()
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

// guard runs first on every routed request: it sets the headers every
// response carries, and turns a handler's panic into a logged 500.
func guard(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("live: panic: %v", r)
		}
	}()
	putCommonHeaders(&c.Response().Header)
	return c.Next()
}

// noStore marks every API response, errors included, as not cacheable: it
// is true only at the moment it was generated.
func noStore(c *fiber.Ctx) error {
	noStoreHeader.set(c)
	return c.Next()
}

// handleError answers every error that reaches fiber: problem JSON, but a
// page or a line of text for a missing page. The detail is fixed by the
// status: fiber's messages quote the request.
func handleError(c *fiber.Ctx, err error, log *slog.Logger) error {
	status := http.StatusInternalServerError
	var fe *fiber.Error
	if errors.As(err, &fe) {
		status = fe.Code
	}
	if status >= 500 && log != nil {
		log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if !isAPIPath(c.Path()) && status == http.StatusNotFound {
		noStoreHeader.set(c)
		c.Set(fiber.HeaderContentType, "text/plain; charset=utf-8")
		return c.Status(status).SendString("404 page not found")
	}
	p := statusProblem(status, "")
	p.Instance = c.Path()
	w, _ := c.Locals(refusalKey).(refusalWriter)
	refuse(c.Context(), p, w)
	return nil
}

// isAPIPath reports the paths of the API, in any letter case as routing
// matches them.
func isAPIPath(p string) bool {
	return len(p) >= 4 && strings.EqualFold(p[:4], "/api") && (len(p) == 4 || p[4] == '/') || strings.EqualFold(p, "/mcp")
}
