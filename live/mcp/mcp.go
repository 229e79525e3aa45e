// Package mcp is the live edge's read-only MCP surface: protocol 2026-07-28
// over stateless Streamable HTTP, on the official Go SDK.
//
//	srv, err := mcp.New(source, mcp.Options{BaseURL: site.BaseURL, APIURL: site.APIURL})
//	app.All("/mcp", srv.Serve)
//
// Six tools answer from a Source: the same documents the live edge's HTTP
// routes serve. Every tool is read-only, and the Source has read methods
// only, so the surface has no authority over anything (Authority).
//
// A transport guard in front of the SDK enforces the 2026-07-28 rules the
// SDK leaves to its caller or relaxes for older clients: POST only, a
// validated Origin and Host, the MCP-Protocol-Version header required and
// equal to the request's _meta, Mcp-Method and Mcp-Name equal to the body,
// client info and capabilities present, no batches, no notifications, only
// server/discover, tools/list and tools/call, a body limit; and every error,
// the guard's and the SDK's, is a JSON-RPC error in application/json.
//
// Behind the guard, the SDK's first answers to server/discover and
// tools/list are kept and sent again; a tools/call of a tool that returns
// a Source document as it is, without arguments, is answered without the
// SDK, with the bytes the SDK would send (fast.go); the SDK answers the
// rest. Options.SDKOnly has the SDK answer everything: the reference the
// tests hold the others to.
//
// A Server is safe for concurrent use.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the one MCP protocol version the surface speaks.
const ProtocolVersion = "2026-07-28"

// Paths of the surface on the live edge's main origin.
const (
	// Endpoint is the MCP endpoint; APIEndpoint answers the same.
	Endpoint    = "/mcp"
	APIEndpoint = "/api/mcp"
	// ManifestPath serves the Manifest and ToolsPath the ToolList.
	ManifestPath = "/api/mcp/manifest"
	ToolsPath    = "/api/mcp/tools"
)

// Methods are the JSON-RPC methods the surface answers; any other is 404
// with -32601.
var Methods = []string{"server/discover", "tools/list", "tools/call"}

// DefaultMaxBodyBytes bounds a request body. The largest valid request, a
// tools/call with its _meta, is well under 2 KiB.
const DefaultMaxBodyBytes = 16 << 10

// Authority is the surface's authority statement (specification 4.9, rule
// 5), published in the manifest and the server's instructions.
const Authority = "This MCP surface is read-only and has no authority over the filesystem, mailboxes, private memory, deploys, " +
	"cloud resources, chain writes, legal or private data, or external commitments. Its tools read the public proof " +
	"surface only: the same documents as the HTTP routes they name. Nothing it says is an authorization; only the Bridge " +
	"authorizes, through the gate."

// NoAuthorityOver lists what the surface cannot touch, as in Authority.
var NoAuthorityOver = []string{"filesystem", "mailbox", "private memory", "deploys", "cloud mutation", "chain writes",
	"legal or private data", "external commitments"}

// Options configure a Server.
type Options struct {
	// BaseURL and APIURL are the site's two origins: browsers on them (and
	// on loopback, for local use) may call the surface, and requests that
	// arrive on a loopback address must name one of their hosts (or a
	// loopback host) in Host. BaseURL is required.
	BaseURL, APIURL string
	// Name and Version identify the server in server/discover and in every
	// result's _meta; Name defaults to "proofsite".
	Name, Version string
	// Schemas are the JSON Schemas (2020-12, self-contained) the live edge
	// publishes for the documents the Source returns, keyed by route path
	// (e.g. "/api/ledger/verify"); they become the tools' output schemas.
	// A document without one is described as a JSON object.
	Schemas map[string][]byte
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int
	// SDKOnly has the SDK answer every request that passes the guard, the
	// reference the server's own answers are tested against: no fast path
	// for document tools (see fast.go), no kept tools/list and
	// server/discover answers.
	SDKOnly bool
	// Logger receives the SDK's messages; nil discards.
	Logger *slog.Logger
}

// Server is the MCP surface: the SDK server with the six tools, behind the
// transport guard.
type Server struct {
	opts   Options
	tools  []*sdk.Tool
	sdk    *sdk.Server
	bridge fiber.Handler // the SDK's handler, through fiber's adaptor
	guard  guard
	kept   map[string]*atomic.Pointer[json.RawMessage] // results of keptMethods, by method
	docs   map[string]*docTool                         // the tools the fast path answers, by name
}

// New returns the surface over src.
func New(src Source, opts Options) (*Server, error) {
	if src == nil {
		return nil, errors.New("mcp: a Source is required")
	}
	if opts.Name == "" {
		opts.Name = "proofsite"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, guard: g, kept: map[string]*atomic.Pointer[json.RawMessage]{}}
	if !opts.SDKOnly {
		for _, m := range keptMethods {
			s.kept[m] = new(atomic.Pointer[json.RawMessage])
		}
	}
	impl := &sdk.Implementation{Name: opts.Name, Title: "Read-only proof surface", Version: opts.Version}
	s.sdk = sdk.NewServer(impl, &sdk.ServerOptions{
		Instructions:              "Read the public proof surface: the ledger verdict, chain status and checkpoint, strict-table rows, the constitution, the node roster and the endpoint catalog. " + Authority,
		Logger:                    opts.Logger,
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		SupportedProtocolVersions: []string{ProtocolVersion},
		SetCacheable:              cacheable,
	})
	if s.tools, s.docs, err = addTools(s.sdk, impl, src, opts.Schemas); err != nil {
		return nil, err
	}
	if opts.SDKOnly {
		s.docs = nil
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       opts.Logger,
		// The guard checks Host with the real local address, which the
		// adaptor does not pass on, and bounds the body before the SDK
		// sees it.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        int64(opts.MaxBodyBytes),
	})
	s.bridge = adaptor.HTTPHandler(h)
	return s, nil
}

// CheckOptions reports the error New returns for opts' site URLs, without
// building a server: for a description of the routes a server would
// answer.
func CheckOptions(opts Options) error {
	_, err := newGuard(opts)
	return err
}

// Tools returns the tool definitions as tools/list answers them. They must
// not be modified.
func (s *Server) Tools() []*sdk.Tool { return s.tools }

// origin returns the scheme://host[:port] of a URL, lower case.
func origin(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", "", fmt.Errorf("mcp: %q is not an absolute URL", raw)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), strings.ToLower(u.Hostname()), nil
}
