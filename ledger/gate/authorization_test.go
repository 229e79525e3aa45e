package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// testKey returns a fixed key for tests, distinct per name.
func testKey(name string) ledger.PrivateKey { return seededKey("gate test key: " + name) }

var (
	bridge  = testKey("bridge")
	bridge2 = testKey("bridge 2")
	outside = testKey("outside")
	t0      = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	payload = ledger.Hash(sha256.Sum256([]byte("the payload")))
)

func testAuthorization() Authorization {
	return Authorization{
		ID: "auth-1", Action: PublicClaimChange, Scope: []string{"capability.maturity", "file:products/gate/README.md"},
		IssuedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour), PayloadSHA256: payload,
	}
}

func mustSign(t testing.TB, a Authorization, k ledger.PrivateKey) []byte {
	t.Helper()
	s, err := Sign(a, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signRaw signs arbitrary authorization bytes (as canonicalized) and wraps
// them in an envelope, to reach the strict decoder behind the signature.
func signRaw(t testing.TB, auth string, k ledger.PrivateKey) []byte {
	t.Helper()
	canon, err := ledger.Canonicalize([]byte(auth))
	if err != nil {
		t.Fatal(err)
	}
	env, err := ledger.MarshalCanonical(map[string]any{"authorization": json.RawMessage(canon), "key_id": k.ID(), "signature": k.Sign(canon).String()})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestSignVerifyRoundTrip(t *testing.T) {
	a := testAuthorization()
	signed := mustSign(t, a, bridge)
	got, err := Verify(signed, NewKeys(bridge.Public()))
	if err != nil {
		t.Fatal(err)
	}
	a.KeyID = bridge.ID()
	if got.ID != a.ID || got.Action != a.Action || !got.IssuedAt.Equal(a.IssuedAt) || !got.ExpiresAt.Equal(a.ExpiresAt) ||
		got.KeyID != a.KeyID || got.PayloadSHA256 != a.PayloadSHA256 || strings.Join(got.Scope, " ") != strings.Join(a.Scope, " ") {
		t.Errorf("got %+v, want %+v", got, a)
	}
	// Deterministic: the same authorization and key give the same bytes.
	if again := mustSign(t, a, bridge); !bytes.Equal(again, signed) {
		t.Error("signing is not deterministic")
	}
	// The signed artifact is canonical JSON.
	if canon, _ := ledger.Canonicalize(signed); !bytes.Equal(canon, signed) {
		t.Errorf("signed artifact is not canonical:\n%s", signed)
	}
	// Reformatting (whitespace, member order) is not tampering: the
	// signature covers the canonical bytes.
	var env map[string]json.RawMessage
	json.Unmarshal(signed, &env)
	var auth map[string]any
	json.Unmarshal(env["authorization"], &auth)
	pretty, _ := json.MarshalIndent(map[string]any{"signature": env["signature"], "key_id": env["key_id"], "authorization": auth}, "", "    ")
	if _, err := Verify(pretty, NewKeys(bridge.Public())); err != nil {
		t.Errorf("reformatted artifact: %v", err)
	}
}

func TestVerifyRejects(t *testing.T) {
	keys := NewKeys(bridge.Public(), bridge2.Public())
	signed := mustSign(t, testAuthorization(), bridge)
	canonAuth := func(mod func(m map[string]any)) string {
		a := testAuthorization()
		a.KeyID = bridge.ID()
		c, _ := a.Canonical()
		var m map[string]any
		json.Unmarshal(c, &m)
		mod(m)
		out, _ := json.Marshal(m)
		return string(out)
	}
	replaceSig := func(s []byte, old, new string) []byte { return bytes.Replace(s, []byte(old), []byte(new), 1) }
	var env map[string]string
	var envRaw map[string]json.RawMessage
	json.Unmarshal(signed, &envRaw)
	env = map[string]string{"signature": strings.Trim(string(envRaw["signature"]), `"`)}
	flipped := []byte(env["signature"])
	if flipped[0] == '0' {
		flipped[0] = '1'
	} else {
		flipped[0] = '0'
	}

	tests := []struct {
		desc string
		data []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"not JSON", []byte("signed: yes"), ErrMalformed},
		{"not an object", []byte(`["authorization"]`), ErrMalformed},
		{"too large", append(signed, bytes.Repeat([]byte(" "), MaxAuthorizationSize)...), ErrMalformed},
		{"trailing data", append(append([]byte{}, signed...), []byte(" {}")...), ErrMalformed},
		{"unknown envelope member", replaceSig(signed, `},"key_id":`, `},"note":"x","key_id":`), ErrMalformed},
		{"envelope member in another case", replaceSig(signed, `},"key_id":`, `},"KEY_ID":`), ErrMalformed},
		{"duplicate envelope member", replaceSig(signed, `},"key_id":`, `},"signature":"00","key_id":`), ErrMalformed},
		{"missing signature", []byte(`{"authorization":{},"key_id":"` + string(bridge.ID()) + `"}`), ErrMalformed},
		{"null signature", replaceSig(signed, `"signature":"`+env["signature"]+`"`, `"signature":null`), ErrMalformed},
		{"signature not hex", replaceSig(signed, env["signature"], strings.Repeat("zz", 64)), ErrMalformed},
		{"signature upper case", replaceSig(signed, env["signature"], strings.ToUpper(env["signature"])), ErrMalformed},
		{"authorization not an object", []byte(`{"authorization":"x","key_id":"` + string(bridge.ID()) + `","signature":"` + env["signature"] + `"}`), ErrMalformed},
		{"key id malformed", replaceSig(signed, `},"key_id":"ed25519:`, `},"key_id":"rsa:`), ErrMalformed},
		{"duplicate member inside the authorization", replaceSig(signed, `"action":"PUBLIC_CLAIM_CHANGE"`, `"action":"PUBLIC_CLAIM_CHANGE","action":"KEY_ROTATION"`), ErrMalformed},
		{"lone surrogate", replaceSig(signed, `"authorization_id":"auth-1"`, `"authorization_id":"auth-1\ud800"`), ErrMalformed},
		{"integer out of range", replaceSig(signed, `"action":"PUBLIC_CLAIM_CHANGE"`, `"action":"PUBLIC_CLAIM_CHANGE","n":9007199254740993`), ErrMalformed},

		{"not a pinned key", mustSign(t, testAuthorization(), outside), ErrWrongKey},
		{"the demo key", mustSign(t, testAuthorization(), DemoKey()), ErrWrongKey},

		{"signature flipped", replaceSig(signed, env["signature"], string(flipped)), ErrTampered},
		{"envelope names the other pinned key", replaceSig(signed, `"key_id":"`+string(bridge.ID())+`","signature"`, `"key_id":"`+string(bridge2.ID())+`","signature"`), ErrTampered},
		{"extra member added after signing", replaceSig(signed, `"action":`, `"note":"x","action":`), ErrTampered},
		{"member in another case added after signing", replaceSig(signed, `"action":`, `"ACTION":"HARD_DELETE","action":`), ErrTampered},

		{"signed: unknown member", signRaw(t, canonAuth(func(m map[string]any) { m["purpose"] = "x" }), bridge), ErrMalformed},
		{"signed: member in another case", signRaw(t, canonAuth(func(m map[string]any) { m["Action"] = m["action"]; delete(m, "action") }), bridge), ErrMalformed},
		{"signed: missing member", signRaw(t, canonAuth(func(m map[string]any) { delete(m, "payload_sha256") }), bridge), ErrMalformed},
		{"signed: null member", signRaw(t, canonAuth(func(m map[string]any) { m["scope"] = nil }), bridge), ErrMalformed},
		{"signed: null scope item", signRaw(t, canonAuth(func(m map[string]any) { m["scope"] = []any{"a", nil} }), bridge), ErrMalformed},
		{"signed: number for a string", signRaw(t, canonAuth(func(m map[string]any) { m["authorization_id"] = 7 }), bridge), ErrMalformed},
		{"signed: time with an offset", signRaw(t, canonAuth(func(m map[string]any) { m["issued_at"] = "2026-03-01T12:00:00+01:00" }), bridge), ErrMalformed},
		{"signed: time with fractions", signRaw(t, canonAuth(func(m map[string]any) { m["issued_at"] = "2026-03-01T11:00:00.5Z" }), bridge), ErrMalformed},
		{"signed: scope unsorted", signRaw(t, canonAuth(func(m map[string]any) { m["scope"] = []string{"b", "a"} }), bridge), ErrMalformed},
		{"signed: scope duplicate", signRaw(t, canonAuth(func(m map[string]any) { m["scope"] = []string{"a", "a"} }), bridge), ErrMalformed},
		{"signed: payload hash upper case", signRaw(t, canonAuth(func(m map[string]any) { m["payload_sha256"] = strings.ToUpper(payload.String()) }), bridge), ErrMalformed},
		{"signed: expires before issued", signRaw(t, canonAuth(func(m map[string]any) { m["expires_at"] = "2026-03-01T10:00:00Z" }), bridge), ErrMalformed},
		{"signed: action lower case", signRaw(t, canonAuth(func(m map[string]any) { m["action"] = "public_claim_change" }), bridge), ErrMalformed},
		{"signed: inner key_id differs from the signer", signRaw(t, canonAuth(func(m map[string]any) { m["key_id"] = string(bridge2.ID()) }), bridge), ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := Verify(tc.data, keys)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestTamperEveryField changes each signed field in turn: every change
// breaks the signature.
func TestTamperEveryField(t *testing.T) {
	signed := mustSign(t, testAuthorization(), bridge)
	changes := map[string]any{
		"action":           "KEY_ROTATION",
		"authorization_id": "auth-2",
		"expires_at":       "2027-01-01T00:00:00Z",
		"issued_at":        "2026-03-01T10:00:00Z",
		"key_id":           string(bridge2.ID()),
		"payload_sha256":   ledger.Hash(sha256.Sum256([]byte("other"))),
		"scope":            []string{"capability.maturity"},
	}
	for _, field := range authorizationFields {
		t.Run(field, func(t *testing.T) {
			v := changes[field]
			if h, ok := v.(ledger.Hash); ok {
				v = h.String()
			}
			tampered, err := tamper(signed, field, v)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(tampered, NewKeys(bridge.Public(), bridge2.Public())); !errors.Is(err, ErrTampered) {
				t.Errorf("got %v, want ErrTampered", err)
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	tests := []struct {
		desc string
		mod  func(a *Authorization)
		want error
	}{
		{"another key's id", func(a *Authorization) { a.KeyID = bridge2.ID() }, ErrWrongKey},
		{"empty id", func(a *Authorization) { a.ID = "" }, ErrMalformed},
		{"id with a space", func(a *Authorization) { a.ID = "a b" }, ErrMalformed},
		{"lower-case action", func(a *Authorization) { a.Action = "publish" }, ErrMalformed},
		{"no expiry", func(a *Authorization) { a.ExpiresAt = time.Time{} }, ErrMalformed},
		{"expiry before issue", func(a *Authorization) { a.ExpiresAt = a.IssuedAt }, ErrMalformed},
		{"fractional seconds", func(a *Authorization) { a.IssuedAt = a.IssuedAt.Add(time.Millisecond) }, ErrMalformed},
		{"unsorted scope", func(a *Authorization) { a.Scope = []string{"b", "a"} }, ErrMalformed},
		{"scope item with a space", func(a *Authorization) { a.Scope = []string{"a b"} }, ErrMalformed},
		{"empty scope item", func(a *Authorization) { a.Scope = []string{""} }, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			a := testAuthorization()
			tc.mod(&a)
			if _, err := Sign(a, bridge); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Sign(testAuthorization(), ledger.PrivateKey{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("zero key: %v", err)
	}
}

func TestParseUnsigned(t *testing.T) {
	const good = `{
  "authorization_id": "publish-2026-03-01",
  "action": "PUBLIC_CLAIM_CHANGE",
  "scope": ["file:products/gate/README.md", "capability.maturity"],
  "issued_at": "2026-03-01T13:00:00+01:00",
  "expires_at": "2026-03-01T18:00:00Z",
  "payload_sha256": "` + "%s" + `"
}`
	a, err := ParseUnsigned([]byte(strings.Replace(good, "%s", payload.String(), 1)))
	if err != nil {
		t.Fatal(err)
	}
	if a.KeyID != "" || a.Scope[0] != "capability.maturity" || a.IssuedAt.Format(TimeFormat) != "2026-03-01T12:00:00Z" {
		t.Errorf("got %+v", a)
	}
	signed := mustSign(t, a, bridge)
	if _, err := Verify(signed, NewKeys(bridge.Public())); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ desc, doc string }{
		{"unknown member", strings.Replace(good, `"action"`, `"purpose": "x", "action"`, 1)},
		{"duplicate member", strings.Replace(good, `"action"`, `"scope": [], "action"`, 1)},
		{"missing member", strings.Replace(good, `"action": "PUBLIC_CLAIM_CHANGE",`, "", 1)},
		{"fractional time", strings.Replace(good, `18:00:00Z`, `18:00:00.25Z`, 1)},
		{"bad time", strings.Replace(good, `2026-03-01T18:00:00Z`, `tomorrow`, 1)},
		{"duplicate scope", strings.Replace(good, `"capability.maturity"]`, `"file:products/gate/README.md"]`, 1)},
		{"bad key id", strings.Replace(good, `"action"`, `"key_id": "me", "action"`, 1)},
	}
	for _, tc := range bad {
		t.Run(tc.desc, func(t *testing.T) {
			if _, err := ParseUnsigned([]byte(strings.Replace(tc.doc, "%s", payload.String(), 1))); !errors.Is(err, ErrMalformed) {
				t.Errorf("got %v, want ErrMalformed", err)
			}
		})
	}
}

// FuzzVerify feeds arbitrary bytes to the parser of signed authorizations.
// It must never panic; whatever verifies must re-encode to exactly the
// bytes the signature covered.
func FuzzVerify(f *testing.F) {
	keys := NewKeys(bridge.Public())
	signed := mustSign(f, testAuthorization(), bridge)
	f.Add(signed)
	f.Add(mustSign(f, testAuthorization(), outside))
	f.Add(bytes.Replace(signed, []byte("auth-1"), []byte("auth-2"), 1))
	f.Add([]byte(`{"authorization":{},"key_id":"ed25519:00000000000000000000000000000000","signature":""}`))
	f.Add([]byte(`{"authorization":{"action":"\ud800"},"key_id":1,"signature":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Verify(data, keys)
		if err != nil {
			if a.ID != "" {
				t.Fatal("an error with a value")
			}
			return
		}
		canon, err := a.Canonical()
		if err != nil {
			t.Fatalf("verified authorization does not re-encode: %v", err)
		}
		var env map[string]json.RawMessage
		json.Unmarshal(data, &env)
		signedBytes, _ := ledger.Canonicalize(env["authorization"])
		if !bytes.Equal(canon, signedBytes) {
			t.Fatalf("decoded value re-encodes to\n%s\nbut the signature covers\n%s", canon, signedBytes)
		}
	})
}

// FuzzDecodeAuthorization fuzzes the strict decoder behind the signature
// directly (signatures make the fuzzer's mutations fail earlier): what it
// accepts must re-encode to the canonical form of its input.
func FuzzDecodeAuthorization(f *testing.F) {
	a := testAuthorization()
	a.KeyID = bridge.ID()
	canon, _ := a.Canonical()
	f.Add(canon, true)
	f.Add(canon, false)
	f.Add([]byte(`{"action":"X","authorization_id":"a","expires_at":"2026-01-01T00:00:01Z","issued_at":"2026-01-01T00:00:00Z","payload_sha256":"`+payload.String()+`","scope":[]}`), false)
	f.Add([]byte(`{"action":"X","Action":"Y"}`), true)
	f.Fuzz(func(t *testing.T, data []byte, signed bool) {
		a, err := decodeAuthorization(data, signed)
		if err != nil {
			return
		}
		if !signed {
			if a.KeyID == "" {
				a.KeyID = bridge.ID()
			}
			if err := a.Validate(); err != nil {
				t.Fatalf("accepted unsigned input does not validate: %v", err)
			}
			return
		}
		got, err := a.Canonical()
		if err != nil {
			t.Fatalf("accepted input does not re-encode: %v", err)
		}
		want, err := ledger.Canonicalize(data)
		if err != nil {
			t.Fatalf("accepted input does not canonicalize: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded value re-encodes to\n%s\nnot\n%s", got, want)
		}
	})
}

// TestBoundedPatterns checks the patterns against the bounded repetitions
// they stand for, at and around every length bound.
func TestBoundedPatterns(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  boundedPattern
		want *regexp.Regexp
		head string // a first character the pattern accepts
		tail string // a following character it accepts
	}{
		{"id", idPattern, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`), "a", ":"},
		{"action", actionPattern, regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`), "A", "_"},
		{"scope", scopePattern, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$`), "a", "/"},
	} {
		inputs := []string{"", tc.head, "-" + tc.head, tc.head + " ", tc.head + "é", "é"}
		for n := range 300 {
			inputs = append(inputs, tc.head+strings.Repeat(tc.tail, n), tc.head+strings.Repeat(tc.tail, n)+"!")
		}
		for _, in := range inputs {
			if got, want := tc.got.MatchString(in), tc.want.MatchString(in); got != want {
				t.Errorf("%s: %q (%d bytes): got %v, want %v", tc.name, in, len(in), got, want)
			}
		}
	}
}
