package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// CertificateFormat names the certificate body's shape.
const CertificateFormat = "proofsite.certificate/v1"

// Certificate is the body of an attestation: what was evaluated (hashes
// only), what the evaluator decided, and with which patterns. Its id is
// the SHA-256 of its RFC 8785 canonical JSON (ledger.PayloadHash), so an
// anchored certificate is a chain block whose payload_hash is the id.
type Certificate struct {
	Format         string         `json:"format"`
	PromptSHA256   string         `json:"prompt_sha256"`
	ResponseSHA256 string         `json:"response_sha256"`
	Decision       Decision       `json:"decision"`
	Compliant      bool           `json:"compliant"`
	Score          int            `json:"score"`
	Categories     []Category     `json:"categories"`
	FlagIDs        []string       `json:"flag_ids"`
	Patterns       PatternSetInfo `json:"patterns"`
	EvaluatedAt    string         `json:"evaluated_at"` // RFC 3339, UTC, whole seconds
}

// Certify evaluates a prompt and the response a model gave to it, as
// Govern does, and returns the certificate body of the outcome with the
// governance report; it records one Record of kind certify. Signing and
// anchoring are the caller's (the route signs a preview; only the gate
// anchors).
func (e *Evaluator) Certify(ctx context.Context, prompt, response string) (Certificate, GovernReport, error) {
	g, err := e.govern(ctx, prompt, response)
	if err != nil {
		return Certificate{}, GovernReport{}, err
	}
	c := Certificate{Format: CertificateFormat, PromptSHA256: g.Input.Input.SHA256, ResponseSHA256: g.Output.Input.SHA256,
		Decision: g.Decision, Compliant: g.Compliant, Score: max(g.Input.Score, g.Output.Score),
		Categories: []Category{}, FlagIDs: []string{}, Patterns: e.patterns,
		EvaluatedAt: g.Input.EvaluatedAt.UTC().Truncate(time.Second).Format(time.RFC3339)}
	for _, r := range []Report{g.Input, g.Output} {
		for _, f := range r.Flags {
			if !slices.Contains(c.Categories, f.Category) {
				c.Categories = append(c.Categories, f.Category)
			}
			if !slices.Contains(c.FlagIDs, f.ID) {
				c.FlagIDs = append(c.FlagIDs, f.ID)
			}
		}
	}
	slices.SortFunc(c.Categories, func(a, b Category) int { return a.index() - b.index() })
	rec := e.governRecord(g)
	rec.Kind = KindCertify
	return c, g, e.keep(ctx, &g.Output, rec)
}

// ParseCertificate reads a certificate body strictly: one JSON object with
// exactly the members of Certificate, in the current format, with hashes
// of 64 lower-case hex digits, a known decision and known categories.
func ParseCertificate(data []byte) (Certificate, error) {
	var c Certificate
	if err := decodeStrict(data, &c); err != nil {
		return Certificate{}, fmt.Errorf("eval: certificate: %w", err)
	}
	bad := func(format string, args ...any) (Certificate, error) {
		return Certificate{}, fmt.Errorf("eval: certificate: "+format, args...)
	}
	switch {
	case c.Format != CertificateFormat:
		return bad("format %q is not %q", c.Format, CertificateFormat)
	case !isHex64(c.PromptSHA256) || !isHex64(c.ResponseSHA256):
		return bad("prompt_sha256 and response_sha256 must be 64 lower-case hex digits")
	case c.Decision.rank() < 0:
		return bad("unknown decision %q", c.Decision)
	case c.Compliant != (c.Decision == Allow):
		return bad("compliant must be true exactly when the decision is allow")
	case c.Categories == nil || c.FlagIDs == nil:
		return bad("categories and flag_ids must be lists")
	}
	if _, err := time.Parse(time.RFC3339, c.EvaluatedAt); err != nil {
		return bad("evaluated_at: %v", err)
	}
	for _, cat := range c.Categories {
		if !cat.Valid() {
			return bad("unknown category %q", cat)
		}
	}
	return c, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown members,
// missing members and anything after the value.
func decodeStrict(data []byte, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	want, _ := json.Marshal(v)
	var names map[string]json.RawMessage
	_ = json.Unmarshal(want, &names)
	for k := range names {
		if _, ok := fields[k]; !ok {
			return fmt.Errorf("member %q is missing", k)
		}
	}
	for k := range fields {
		if _, ok := names[k]; !ok {
			return fmt.Errorf("unknown member %q", k)
		}
	}
	return json.Unmarshal(data, v)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
