package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/proofsite/proofsite/ledger"
)

// ClaimsFormat names the claims document format.
const ClaimsFormat = "proofsite-claims/1"

// Claims is a set of named public claims, each a JSON value. Claim names
// follow the rules of scope items, so an authorization's scope can list
// them. Its canonical document
//
//	{"claims":{"capability.maturity":{…},"file:products/gate/README.md":{"sha256":"…"},…},"format":"proofsite-claims/1"}
//
// is what the publish rule hashes (payload_sha256) and records on the
// chain. The zero value is an empty set.
type Claims struct {
	values map[string]json.RawMessage // canonical JSON of each value
}

// Set records claim name with the canonical JSON of v.
func (c *Claims) Set(name string, v any) error {
	if !scopePattern.MatchString(name) {
		return fmt.Errorf("%w: claim name %q must be 1-256 of A-Z a-z 0-9 . _ : / - starting with a letter or digit", ErrInvalidClaims, name)
	}
	canon, err := ledger.MarshalCanonical(v)
	if err != nil {
		return fmt.Errorf("%w: claim %s: %w", ErrInvalidClaims, name, err)
	}
	if c.values == nil {
		c.values = map[string]json.RawMessage{}
	}
	c.values[name] = canon
	return nil
}

// Names returns the claim names, sorted.
func (c Claims) Names() []string { return slices.Sorted(maps.Keys(c.values)) }

// Len returns the number of claims.
func (c Claims) Len() int { return len(c.values) }

// Value returns the canonical JSON of claim name.
func (c Claims) Value(name string) (json.RawMessage, bool) {
	v, ok := c.values[name]
	return slices.Clone(v), ok
}

// Canonical returns the canonical claims document.
func (c Claims) Canonical() ([]byte, error) {
	values := c.values
	if values == nil {
		values = map[string]json.RawMessage{}
	}
	return ledger.MarshalCanonical(map[string]any{"format": ClaimsFormat, "claims": values})
}

// MarshalJSON encodes the canonical claims document.
func (c Claims) MarshalJSON() ([]byte, error) { return c.Canonical() }

// Hash returns the SHA-256 of the canonical claims document: the
// payload_sha256 a publish authorization must carry.
func (c Claims) Hash() (ledger.Hash, error) {
	canon, err := c.Canonical()
	if err != nil {
		return ledger.Hash{}, err
	}
	return sha256.Sum256(canon), nil
}

// ParseClaims reads a claims document strictly: exactly the members claims
// and format, the known format, valid claim names, no duplicate members.
func ParseClaims(data []byte) (Claims, error) {
	m, err := members(data, []string{"claims", "format"}, nil)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %w", ErrInvalidClaims, err)
	}
	var format string
	if err := json.Unmarshal(m["format"], &format); err != nil || format != ClaimsFormat {
		return Claims{}, fmt.Errorf("%w: format is not %q", ErrInvalidClaims, ClaimsFormat)
	}
	raw := bytes.TrimSpace(m["claims"])
	if len(raw) == 0 || raw[0] != '{' {
		return Claims{}, fmt.Errorf("%w: claims is not an object", ErrInvalidClaims)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrInvalidClaims, err)
	}
	var c Claims
	for name, v := range values {
		if err := c.Set(name, v); err != nil {
			return Claims{}, err
		}
	}
	return c, nil
}

// Changed returns the names of the claims that differ between old and new:
// changed values, and claims added or removed, sorted. Every claim of new
// is changed when old is empty (nothing recorded yet).
func Changed(old, new Claims) []string {
	var out []string
	for name, v := range new.values {
		if ov, ok := old.values[name]; !ok || !bytes.Equal(ov, v) {
			out = append(out, name)
		}
	}
	for name := range old.values {
		if _, ok := new.values[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// The claims a policy contributes to a claims document, so that changing
// the action table, the denied list or the pinned Bridge keys is itself a
// public claim change.
const (
	ClaimActions    = "gate.actions"
	ClaimDenied     = "gate.denied"
	ClaimBridgeKeys = "gate.bridge_keys"
)

type ruleJSON struct {
	Action   Action    `json:"action"`
	Requires []Control `json:"requires"`
}

type keyJSON struct {
	KeyID     ledger.KeyID `json:"key_id"`
	PublicKey string       `json:"public_key"`
}

// AddClaims records the policy in c: its action table (ClaimActions), the
// actions it denies (ClaimDenied) and its pinned Bridge keys
// (ClaimBridgeKeys), in forms PolicyFromClaims reads back.
func (p *Policy) AddClaims(c *Claims) error {
	rules := []ruleJSON{}
	for _, r := range p.rules {
		rules = append(rules, ruleJSON(r))
	}
	keys := []keyJSON{}
	for _, id := range slices.Sorted(maps.Keys(p.keys)) {
		keys = append(keys, keyJSON{KeyID: id, PublicKey: p.keys[id].String()})
	}
	if err := c.Set(ClaimActions, rules); err != nil {
		return err
	}
	if err := c.Set(ClaimDenied, p.denied); err != nil {
		return err
	}
	return c.Set(ClaimBridgeKeys, keys)
}

// PolicyFromClaims rebuilds the policy a claims document recorded (with
// NewPolicy's checks): the policy in effect when those claims were
// published, under which a change to them must be authorized.
func PolicyFromClaims(c Claims) (*Policy, error) {
	var opts PolicyOptions
	var rules []ruleJSON
	var keys []keyJSON
	for _, f := range []struct {
		name string
		dst  any
	}{{ClaimActions, &rules}, {ClaimDenied, &opts.Denied}, {ClaimBridgeKeys, &keys}} {
		v, ok := c.values[f.name]
		if !ok {
			return nil, fmt.Errorf("%w: no %s claim", ErrInvalidClaims, f.name)
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(f.dst); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidClaims, f.name, err)
		}
	}
	for _, r := range rules {
		opts.Actions = append(opts.Actions, ActionRule(r))
	}
	for _, k := range keys {
		pk, err := ledger.ParsePublicKeyHex(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: key %s: %w", ErrInvalidClaims, ClaimBridgeKeys, k.KeyID, err)
		}
		if pk.ID() != k.KeyID {
			return nil, fmt.Errorf("%w: %s: key id %s is not the id of its key (%s)", ErrInvalidClaims, ClaimBridgeKeys, k.KeyID, pk.ID())
		}
		opts.BridgeKeys = append(opts.BridgeKeys, pk)
	}
	return NewPolicy(opts)
}

// PublishKind is the ledger block kind of the publish rule's decisions.
const PublishKind = "gate_decision.publish"

// RecordFormat names the decision record format.
const RecordFormat = "proofsite-gate-decision/1"

// Record is the private payload of a gate-decision block: what was decided,
// under which authorization, and the claims it published. The block's
// payload_hash commits to it; the public sees only the hash.
//
//	{"action":"PUBLIC_CLAIM_CHANGE","authorization":{…signed artifact…},"authorization_id":"…",
//	 "changed":["…"],"claims":{…claims document…},"claims_sha256":"…","decision":"ALLOW",
//	 "format":"proofsite-gate-decision/1"}
type Record struct {
	Action          Action
	Decision        Decision
	AuthorizationID string
	Authorization   json.RawMessage // the signed artifact as presented, canonicalized
	Changed         []string
	Claims          Claims
	ClaimsSHA256    ledger.Hash // Claims.Hash(), checked when parsed
}

var recordFields = []string{"action", "authorization", "authorization_id", "changed", "claims", "claims_sha256", "decision", "format"}

// Marshal returns the record's canonical JSON. ClaimsSHA256 is computed
// from Claims.
func (r Record) Marshal() ([]byte, error) {
	h, err := r.Claims.Hash()
	if err != nil {
		return nil, err
	}
	auth, err := ledger.Canonicalize(r.Authorization)
	if err != nil {
		return nil, fmt.Errorf("%w: authorization: %w", ErrInvalidClaims, err)
	}
	changed := r.Changed
	if changed == nil {
		changed = []string{}
	}
	return ledger.MarshalCanonical(map[string]any{
		"format": RecordFormat, "action": r.Action, "decision": r.Decision,
		"authorization_id": r.AuthorizationID, "authorization": json.RawMessage(auth),
		"changed": changed, "claims": r.Claims, "claims_sha256": h.String(),
	})
}

// ParseRecord reads a decision record strictly and checks that
// claims_sha256 is the hash of its claims.
func ParseRecord(data []byte) (Record, error) {
	m, err := members(data, recordFields, nil)
	if err != nil {
		return Record{}, fmt.Errorf("%w: record: %w", ErrInvalidClaims, err)
	}
	var format, hash string
	var r Record
	for _, f := range []struct {
		name string
		dst  any
	}{{"format", &format}, {"action", &r.Action}, {"decision", &r.Decision}, {"authorization_id", &r.AuthorizationID},
		{"changed", &r.Changed}, {"claims_sha256", &hash}} {
		if err := json.Unmarshal(m[f.name], f.dst); err != nil {
			return Record{}, fmt.Errorf("%w: record: %s: %v", ErrInvalidClaims, f.name, err)
		}
	}
	if format != RecordFormat {
		return Record{}, fmt.Errorf("%w: record format is not %q", ErrInvalidClaims, RecordFormat)
	}
	if r.Claims, err = ParseClaims(m["claims"]); err != nil {
		return Record{}, err
	}
	if r.ClaimsSHA256, err = ledger.ParseHash(hash); err != nil {
		return Record{}, fmt.Errorf("%w: record: claims_sha256: %v", ErrInvalidClaims, err)
	}
	if h, err := r.Claims.Hash(); err != nil || h != r.ClaimsSHA256 {
		return Record{}, fmt.Errorf("%w: record: claims_sha256 %s is not the hash of its claims", ErrInvalidClaims, r.ClaimsSHA256)
	}
	r.Authorization = slices.Clone(m["authorization"])
	return r, nil
}

// CertificateKind is the kind of the block that anchors a certificate: its
// payload is the certificate's canonical JSON, so its payload_hash is the
// certificate id. Only an allowed CERT_ANCHOR decision appends one.
const CertificateKind = "certificate"
