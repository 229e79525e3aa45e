package gate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// MaxAuthorizationSize bounds a signed authorization; larger input is
// malformed before anything parses it.
const MaxAuthorizationSize = 64 << 10

// TimeFormat is the only form issued_at and expires_at take inside a signed
// authorization: RFC 3339, UTC, whole seconds, a trailing "Z".
const TimeFormat = "2006-01-02T15:04:05Z"

var (
	idPattern     = boundedPattern{regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`), 128}
	actionPattern = boundedPattern{regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`), 64}
	scopePattern  = boundedPattern{regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]*$`), 256}
	keyIDPattern  = regexp.MustCompile(`^ed25519:[0-9a-f]{32}$`)
)

// boundedPattern is an ASCII pattern of unbounded repetition and the longest
// string it accepts. A bounded repetition ({0,255}) compiles to as many
// states, which took milliseconds at the start of every command.
type boundedPattern struct {
	re  *regexp.Regexp
	max int
}

// MatchString reports whether s is at most p.max bytes long and matches.
func (p boundedPattern) MatchString(s string) bool { return len(s) <= p.max && p.re.MatchString(s) }

// Authorization is what the Bridge signs: one action, the scope it covers,
// a validity window, the signing key's id and the SHA-256 of the payload the
// action applies to. Its signed form is the RFC 8785 canonical JSON object
// with exactly these members (scope sorted, without duplicates):
//
//	{"action":"PUBLIC_CLAIM_CHANGE","authorization_id":"…","expires_at":"2026-11-03T21:00:00Z",
//	 "issued_at":"2026-11-03T09:00:00Z","key_id":"ed25519:…","payload_sha256":"…","scope":["…"]}
//
// Values of this type that came from Verify were decoded from the exact
// bytes whose signature verified.
type Authorization struct {
	ID            string       // authorization_id: 1–128 of A-Z a-z 0-9 . _ : -, starting alphanumeric
	Action        Action       // the one action class it authorizes
	Scope         []string     // what the action may touch: claim names, files; sorted, unique
	IssuedAt      time.Time    // valid from (inclusive)
	ExpiresAt     time.Time    // valid until (exclusive)
	KeyID         ledger.KeyID // the Bridge key that signs it
	PayloadSHA256 ledger.Hash  // SHA-256 of the payload the action applies to
}

// authorizationJSON is the wire form of an Authorization.
type authorizationJSON struct {
	Action        string   `json:"action"`
	ID            string   `json:"authorization_id"`
	ExpiresAt     string   `json:"expires_at"`
	IssuedAt      string   `json:"issued_at"`
	KeyID         string   `json:"key_id"`
	PayloadSHA256 string   `json:"payload_sha256"`
	Scope         []string `json:"scope"`
}

// authorizationFields are the members of a signed authorization, all
// required.
var authorizationFields = []string{"action", "authorization_id", "expires_at", "issued_at", "key_id", "payload_sha256", "scope"}

func (a Authorization) wire() authorizationJSON {
	scope := a.Scope
	if scope == nil {
		scope = []string{}
	}
	return authorizationJSON{
		Action: string(a.Action), ID: a.ID,
		ExpiresAt: a.ExpiresAt.UTC().Format(TimeFormat), IssuedAt: a.IssuedAt.UTC().Format(TimeFormat),
		KeyID: string(a.KeyID), PayloadSHA256: a.PayloadSHA256.String(), Scope: scope,
	}
}

// MarshalJSON encodes the authorization in its canonical form.
func (a Authorization) MarshalJSON() ([]byte, error) { return a.Canonical() }

// Canonical returns the RFC 8785 bytes the Bridge signs. It fails for an
// authorization that does not Validate.
func (a Authorization) Canonical() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return ledger.MarshalCanonical(a.wire())
}

// Validate checks every field: the id and action patterns, scope items
// (1–256 of A-Z a-z 0-9 . _ : / -, starting alphanumeric; sorted; unique),
// whole-second times with issued_at before expires_at, a key id in the
// derived form. The checks are the same for signing and for verifying.
func (a Authorization) Validate() error { return a.validate(true) }

// validate is Validate with the key id optional when requireKey is false
// (the unsigned input of Sign).
func (a Authorization) validate(requireKey bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	switch {
	case !idPattern.MatchString(a.ID):
		return bad("authorization_id %q must be 1-128 of A-Z a-z 0-9 . _ : - starting with a letter or digit", a.ID)
	case !actionPattern.MatchString(string(a.Action)):
		return bad("action %q must be upper case letters, digits and _", a.Action)
	case (requireKey || a.KeyID != "") && !keyIDPattern.MatchString(string(a.KeyID)):
		return bad("key_id %q is not an ed25519 key id", a.KeyID)
	case a.IssuedAt.IsZero() || a.ExpiresAt.IsZero():
		return bad("issued_at and expires_at are required")
	case !a.IssuedAt.Equal(a.IssuedAt.Truncate(time.Second)) || !a.ExpiresAt.Equal(a.ExpiresAt.Truncate(time.Second)):
		return bad("issued_at and expires_at are whole seconds")
	case !a.ExpiresAt.After(a.IssuedAt):
		return bad("expires_at %s is not after issued_at %s", a.ExpiresAt.UTC().Format(TimeFormat), a.IssuedAt.UTC().Format(TimeFormat))
	}
	if err := checkScope(a.Scope); err != nil {
		return fmt.Errorf("%w: scope: %v", ErrMalformed, err)
	}
	return nil
}

// checkScope requires valid, sorted, unique items.
func checkScope(scope []string) error {
	for i, s := range scope {
		if !scopePattern.MatchString(s) {
			return fmt.Errorf("item %q must be 1-256 of A-Z a-z 0-9 . _ : / - starting with a letter or digit", s)
		}
		if i > 0 && scope[i-1] >= s {
			if scope[i-1] == s {
				return fmt.Errorf("item %q listed twice", s)
			}
			return fmt.Errorf("items are not sorted (%q before %q)", scope[i-1], s)
		}
	}
	return nil
}

// Covers reports whether a is for action and its scope holds every item
// of scope.
func (a Authorization) Covers(action Action, scope []string) bool {
	if a.Action != action {
		return false
	}
	for _, s := range scope {
		if _, found := slices.BinarySearch(a.Scope, s); !found {
			return false
		}
	}
	return true
}

// ValidAt reports whether t is in [IssuedAt, ExpiresAt).
func (a Authorization) ValidAt(t time.Time) bool {
	return !t.Before(a.IssuedAt) && t.Before(a.ExpiresAt)
}

// envelopeFields are the members of a signed authorization file.
var envelopeFields = []string{"authorization", "key_id", "signature"}

// Sign returns the signed artifact: the canonical JSON envelope
//
//	{"authorization":{…canonical authorization…},"key_id":"ed25519:…","signature":"…128 hex digits…"}
//
// whose signature is key's ed25519 signature over the authorization's
// canonical bytes. key_id appears twice: inside the authorization, where
// the signature binds it, and beside it, so a verifier picks the pinned key
// without reading unverified content. An empty a.KeyID is set to key's id;
// any other id than key's is refused. Sign runs where the Bridge key lives,
// never on the server.
func Sign(a Authorization, key ledger.PrivateKey) ([]byte, error) {
	if key.ID() == "" {
		return nil, fmt.Errorf("%w: no signing key", ErrMalformed)
	}
	if a.KeyID == "" {
		a.KeyID = key.ID()
	}
	if a.KeyID != key.ID() {
		return nil, fmt.Errorf("%w: key_id %s is not the signing key %s", ErrWrongKey, a.KeyID, key.ID())
	}
	canon, err := a.Canonical()
	if err != nil {
		return nil, err
	}
	sig := key.Sign(canon)
	return ledger.MarshalCanonical(map[string]any{
		"authorization": json.RawMessage(canon),
		"key_id":        a.KeyID,
		"signature":     sig.String(),
	})
}

// Keys are the pinned Bridge public keys, by id.
type Keys map[ledger.KeyID]ledger.PublicKey

// NewKeys pins keys; a key listed twice is pinned once.
func NewKeys(keys ...ledger.PublicKey) Keys {
	ks := make(Keys, len(keys))
	for _, k := range keys {
		ks[k.ID()] = k
	}
	return ks
}

// Verify reads a signed authorization and checks it against the pinned
// keys, in this order: the envelope is well-formed JSON with exactly the
// members authorization, key_id and signature (ErrMalformed); key_id names a
// pinned key (ErrWrongKey); the signature verifies over the RFC 8785
// canonical bytes of the authorization member (ErrTampered); and only then
// those exact bytes decode, strictly, into an Authorization that validates
// and names the same key (ErrMalformed). It does not check time, scope or
// payload: Policy.Evaluate does.
func Verify(data []byte, keys Keys) (Authorization, error) {
	authRaw, keyID, sig, err := parseEnvelope(data)
	if err != nil {
		return Authorization{}, err
	}
	// Canonicalize applies the strict input rules (no duplicate members, no
	// invalid UTF-8 or lone surrogates, exact integers) before JCS.
	canon, err := ledger.Canonicalize(authRaw)
	if err != nil {
		return Authorization{}, fmt.Errorf("%w: authorization: %w", ErrMalformed, err)
	}
	key, pinned := keys[keyID]
	if !pinned {
		note := "pinned: " + keys.String()
		if keyID == DemoKeyID() {
			note = "it is the published demo key, which authorizes nothing outside the demo; " + note
		}
		return Authorization{}, fmt.Errorf("%w: signed by %s; %s", ErrWrongKey, keyID, note)
	}
	if !key.Verify(canon, sig) {
		return Authorization{}, fmt.Errorf("%w: key %s", ErrTampered, keyID)
	}
	// Signature verified: decode only canon, the exact bytes it covers, strictly (no unknown, missing, duplicate or null members; canonical values only).
	a, err := decodeAuthorization(canon, true)
	if err != nil {
		return Authorization{}, err
	}
	if a.KeyID != keyID {
		return Authorization{}, fmt.Errorf("%w: signed by %s but names key_id %s", ErrMalformed, keyID, a.KeyID)
	}
	return a, nil
}

// String lists the pinned key ids, sorted.
func (ks Keys) String() string {
	ids := make([]string, 0, len(ks))
	for id := range ks {
		ids = append(ids, string(id))
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// parseEnvelope checks the outer object and returns its members, unverified.
func parseEnvelope(data []byte) (json.RawMessage, ledger.KeyID, ledger.Signature, error) {
	var sig ledger.Signature
	if len(data) > MaxAuthorizationSize {
		return nil, "", sig, fmt.Errorf("%w: larger than %d bytes", ErrMalformed, MaxAuthorizationSize)
	}
	m, err := members(data, envelopeFields, nil)
	if err != nil {
		return nil, "", sig, err
	}
	auth := bytes.TrimSpace(m["authorization"])
	if len(auth) == 0 || auth[0] != '{' {
		return nil, "", sig, fmt.Errorf("%w: authorization is not a JSON object", ErrMalformed)
	}
	var keyID, sigHex string
	if err := json.Unmarshal(m["key_id"], &keyID); err != nil || !keyIDPattern.MatchString(keyID) {
		return nil, "", sig, fmt.Errorf("%w: key_id is not an ed25519 key id", ErrMalformed)
	}
	if err := json.Unmarshal(m["signature"], &sigHex); err != nil {
		return nil, "", sig, fmt.Errorf("%w: signature is not a string", ErrMalformed)
	}
	if err := sig.UnmarshalText([]byte(sigHex)); err != nil {
		return nil, "", sig, fmt.Errorf("%w: signature is not 128 lowercase hex digits", ErrMalformed)
	}
	return auth, ledger.KeyID(keyID), sig, nil
}

// members requires data to be one JSON object (ValidateJSON: no duplicate
// members, valid UTF-8) whose member names are exactly the required ones
// plus any of the optional ones, compared byte for byte (encoding/json alone
// would match "ACTION" to "action"), none null.
func members(data []byte, required, optional []string) (map[string]json.RawMessage, error) {
	if err := ledger.ValidateJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for name, raw := range m {
		if !slices.Contains(required, name) && !slices.Contains(optional, name) {
			return nil, fmt.Errorf("%w: unknown member %q", ErrMalformed, name)
		}
		if string(raw) == "null" {
			return nil, fmt.Errorf("%w: member %q is null", ErrMalformed, name)
		}
	}
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return nil, fmt.Errorf("%w: missing member %q", ErrMalformed, name)
		}
	}
	return m, nil
}

// decodeAuthorization decodes an authorization object strictly. signed
// requires the canonical value forms and every member; unsigned (the input
// of gate sign) makes key_id optional, accepts any RFC 3339 time with whole
// seconds and sorts the scope.
func decodeAuthorization(data []byte, signed bool) (Authorization, error) {
	var optional []string
	required := authorizationFields
	if !signed {
		required = slices.DeleteFunc(slices.Clone(authorizationFields), func(s string) bool { return s == "key_id" })
		optional = []string{"key_id"}
	}
	m, err := members(data, required, optional)
	if err != nil {
		return Authorization{}, err
	}
	str := func(name string) (string, error) {
		var s string
		if raw, ok := m[name]; ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", fmt.Errorf("%w: %s is not a string", ErrMalformed, name)
			}
		}
		return s, nil
	}
	var w authorizationJSON
	for _, f := range []struct {
		name string
		dst  *string
	}{{"action", &w.Action}, {"authorization_id", &w.ID}, {"expires_at", &w.ExpiresAt}, {"issued_at", &w.IssuedAt}, {"key_id", &w.KeyID}, {"payload_sha256", &w.PayloadSHA256}} {
		if *f.dst, err = str(f.name); err != nil {
			return Authorization{}, err
		}
	}
	// A null item decodes to "", which Validate refuses.
	if err := json.Unmarshal(m["scope"], &w.Scope); err != nil {
		return Authorization{}, fmt.Errorf("%w: scope is not a list of strings", ErrMalformed)
	}
	if w.Scope == nil {
		w.Scope = []string{}
	}
	a := Authorization{ID: w.ID, Action: Action(w.Action), Scope: w.Scope, KeyID: ledger.KeyID(w.KeyID)}
	if a.IssuedAt, err = parseTime("issued_at", w.IssuedAt, signed); err != nil {
		return Authorization{}, err
	}
	if a.ExpiresAt, err = parseTime("expires_at", w.ExpiresAt, signed); err != nil {
		return Authorization{}, err
	}
	if len(w.PayloadSHA256) != 64 || strings.ToLower(w.PayloadSHA256) != w.PayloadSHA256 {
		return Authorization{}, fmt.Errorf("%w: payload_sha256 is not 64 lowercase hex digits", ErrMalformed)
	}
	if _, err := hex.Decode(a.PayloadSHA256[:], []byte(w.PayloadSHA256)); err != nil {
		return Authorization{}, fmt.Errorf("%w: payload_sha256 is not 64 lowercase hex digits", ErrMalformed)
	}
	if !signed {
		slices.Sort(a.Scope)
	}
	if err := a.validate(signed); err != nil {
		return Authorization{}, err
	}
	return a, nil
}

// parseTime reads issued_at or expires_at. Signed content must be in
// TimeFormat exactly; the unsigned input of gate sign may use any RFC 3339
// offset, converted to UTC, but whole seconds only.
func parseTime(name, s string, signed bool) (time.Time, error) {
	if signed {
		t, err := time.Parse(TimeFormat, s)
		if err != nil || t.Format(TimeFormat) != s {
			return time.Time{}, fmt.Errorf("%w: %s %q is not in the form %s", ErrMalformed, name, s, TimeFormat)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s %q is not an RFC 3339 time", ErrMalformed, name, s)
	}
	if t.Nanosecond() != 0 {
		return time.Time{}, fmt.Errorf("%w: %s %q has fractional seconds", ErrMalformed, name, s)
	}
	return t.UTC(), nil
}

// ParseUnsigned reads an authorization the Bridge wrote, before signing: the
// same members as the signed form with key_id optional (Sign fills it in),
// strictly (no unknown, duplicate or null members), times in any RFC 3339
// offset with whole seconds (stored in UTC), scope sorted for it.
func ParseUnsigned(data []byte) (Authorization, error) {
	if len(data) > MaxAuthorizationSize {
		return Authorization{}, fmt.Errorf("%w: larger than %d bytes", ErrMalformed, MaxAuthorizationSize)
	}
	return decodeAuthorization(data, false)
}

// ValidScopeItem reports whether s can be a scope item or a claim name:
// 1–256 of A-Z a-z 0-9 . _ : / -, starting with a letter or digit.
func ValidScopeItem(s string) bool { return scopePattern.MatchString(s) }
