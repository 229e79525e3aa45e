// Package live is the live edge: one fiber server that serves the built
// site from memory and answers the request-time routes.
//
//	srv, err := live.New(live.Options{PublicDir: "public"})
//	go srv.Serve(ln)
//	defer srv.Shutdown(ctx)
//
// Every error any route returns is answered as RFC 9457 problem JSON for
// API paths, and with the site's 404 page for pages.
package live

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/reload"
)

// Options configure a Server.
type Options struct {
	// PublicDir is the built site to serve; required.
	PublicDir string
	// Reload, when set, mounts the watch-mode reload routes.
	Reload *reload.Hub
	// Logger receives request errors and reloads; nil discards.
	Logger *slog.Logger
}

// ReloadPrefix is where a reload hub's routes are mounted; pages built for
// watch mode load their script from here.
const ReloadPrefix = "/__proofsite"

// Server is the live edge.
type Server struct {
	app    *fiber.App
	static *staticSite
	opts   Options
	log    *slog.Logger
}

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if opts.PublicDir == "" {
		return nil, errors.New("live: PublicDir is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log}
	var err error
	s.static, err = newStaticSite(opts.PublicDir, func(err error) { log.Error("reloading the site", "err", err) })
	if err != nil {
		return nil, err
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "proofsite",
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		ReadBufferSize:        16 << 10,
	})
	s.app.Use(securityHeaders)
	if opts.Reload != nil {
		opts.Reload.Register(s.app, ReloadPrefix)
	}
	s.app.Use(s.static.serve)
	return s, nil
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(ln) }

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.opts.Reload != nil {
		s.opts.Reload.Close()
	}
	return s.app.ShutdownWithContext(ctx)
}

// SiteChanged re-reads the given output paths after an incremental build.
func (s *Server) SiteChanged(paths []string) error { return s.static.Update(paths) }

// SiteReplaced reloads the whole site after a full build.
func (s *Server) SiteReplaced() error { return s.static.reload() }

func securityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "strict-origin-when-cross-origin")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	return c.Next()
}

// handleError answers every error: API paths get problem JSON, pages get
// the status and a short text.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	status := fiber.StatusInternalServerError
	detail := ""
	var fe *fiber.Error
	if errors.As(err, &fe) {
		status = fe.Code
		if fe.Message != http.StatusText(fe.Code) {
			detail = fe.Message
		}
	}
	if status >= 500 {
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
		detail = "" // never show internals
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	if !isAPIPath(c.Path()) && status == fiber.StatusNotFound {
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
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return c.Status(status).JSON(fiber.Map{
		"type":     "about:blank",
		"title":    http.StatusText(status),
		"status":   status,
		"detail":   detail,
		"instance": c.Path(),
	}, "application/problem+json")
}
