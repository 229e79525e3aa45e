package mcp

import (
	"encoding/json"
	"time"
)

// Manifest describes the surface (GET /api/mcp/manifest): how to reach it,
// what it answers and what it cannot do. It is built from the same tool
// definitions tools/list answers with.
type Manifest struct {
	Name              string          `json:"name"`
	Version           string          `json:"version"`
	ProtocolVersion   string          `json:"protocol_version" doc:"The one MCP protocol version spoken"`
	SupportedVersions []string        `json:"supported_versions"`
	Transport         Transport       `json:"transport"`
	Methods           []string        `json:"methods" doc:"JSON-RPC methods answered; tools/call calls any of the tools"`
	Tools             []ToolSummary   `json:"tools"`
	Authority         AuthorityNotice `json:"authority"`
	ToolList          string          `json:"tool_list" doc:"The tool definitions exactly as tools/list answers them"`
	GeneratedAt       time.Time       `json:"generated_at"`
}

// Transport says how to talk to the surface.
type Transport struct {
	Kind            string   `json:"kind" doc:"streamable-http, stateless: one JSON-RPC request per POST, one JSON object back"`
	Endpoints       []string `json:"endpoints"`
	HTTPMethod      string   `json:"http_method"`
	Stateless       bool     `json:"stateless"`
	Sessions        bool     `json:"sessions" doc:"Always false: no Mcp-Session-Id is minted or honoured"`
	Initialize      bool     `json:"initialize" doc:"Always false: there is no initialize handshake"`
	ResponseType    string   `json:"response_type"`
	RequiredHeaders []string `json:"required_headers"`
	RequiredMeta    []string `json:"required_meta" doc:"Keys every request carries in params._meta"`
	MaxBodyBytes    int      `json:"max_body_bytes"`
}

// ToolSummary names one tool in the manifest.
type ToolSummary struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
	Destructive bool   `json:"destructive"`
	Idempotent  bool   `json:"idempotent"`
	OpenWorld   bool   `json:"open_world"`
}

// AuthorityNotice is what the surface may not do.
type AuthorityNotice struct {
	ReadOnly        bool     `json:"read_only"`
	Statement       string   `json:"statement"`
	NoAuthorityOver []string `json:"no_authority_over"`
}

// ToolList is the narrow tool list (GET /api/mcp/tools): the tools exactly
// as tools/list answers them.
type ToolList struct {
	ProtocolVersion string            `json:"protocol_version"`
	Endpoint        string            `json:"endpoint"`
	Callable        bool              `json:"callable" doc:"Always true: every tool listed answers tools/call at the endpoint"`
	Tools           []json.RawMessage `json:"tools" doc:"MCP Tool objects: name, title, description, inputSchema, outputSchema, annotations"`
	GeneratedAt     time.Time         `json:"generated_at"`
}

// Manifest returns the manifest as of now.
func (s *Server) Manifest(now time.Time) Manifest {
	m := Manifest{Name: s.opts.Name, Version: s.opts.Version, ProtocolVersion: ProtocolVersion, SupportedVersions: []string{ProtocolVersion},
		Transport: Transport{Kind: "streamable-http", Endpoints: []string{s.opts.BaseURL + Endpoint, s.opts.BaseURL + APIEndpoint},
			HTTPMethod: "POST", Stateless: true, ResponseType: "application/json",
			RequiredHeaders: []string{"Content-Type: application/json", "Accept: application/json, text/event-stream",
				HeaderProtocolVersion + ": " + ProtocolVersion, HeaderMethod + ": <the body's method>", HeaderName + ": <params.name> (tools/call)"},
			RequiredMeta: []string{metaProtocolVersion, metaClientInfo, metaClientCapabilities}, MaxBodyBytes: s.opts.MaxBodyBytes},
		Methods:     Methods,
		Authority:   AuthorityNotice{ReadOnly: true, Statement: Authority, NoAuthorityOver: NoAuthorityOver},
		ToolList:    s.opts.BaseURL + ToolsPath,
		GeneratedAt: now.UTC(),
	}
	for _, t := range s.tools {
		a := t.Annotations
		m.Tools = append(m.Tools, ToolSummary{Name: t.Name, Title: t.Title, Description: t.Description, ReadOnly: a.ReadOnlyHint,
			Destructive: a.DestructiveHint == nil || *a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint == nil || *a.OpenWorldHint})
	}
	return m
}

// ToolList returns the narrow tool list as of now.
func (s *Server) ToolList(now time.Time) ToolList {
	l := ToolList{ProtocolVersion: ProtocolVersion, Endpoint: s.opts.BaseURL + Endpoint, Callable: true, GeneratedAt: now.UTC()}
	for _, t := range s.tools {
		l.Tools = append(l.Tools, mustMarshal(t))
	}
	return l
}
