package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func claimsOf(t testing.TB, kv ...any) Claims {
	t.Helper()
	var c Claims
	for i := 0; i+1 < len(kv); i += 2 {
		if err := c.Set(kv[i].(string), kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestChanged(t *testing.T) {
	base := claimsOf(t, "capability.maturity", map[string]string{"value": "gate_public_launch"}, "publish_rule", "text", "file:a.md", map[string]string{"sha256": "00"})
	tests := []struct {
		desc     string
		old, new Claims
		want     []string
	}{
		{"nothing recorded: everything changed", Claims{}, base, []string{"capability.maturity", "file:a.md", "publish_rule"}},
		{"same", base, base, nil},
		{"same values, other key order", base, claimsOf(t, "file:a.md", json.RawMessage(`{ "sha256" : "00" }`), "publish_rule", "text", "capability.maturity", map[string]string{"value": "gate_public_launch"}), nil},
		{"a value changed", base, claimsOf(t, "capability.maturity", map[string]string{"value": "roadmap"}, "publish_rule", "text", "file:a.md", map[string]string{"sha256": "00"}), []string{"capability.maturity"}},
		{"a claim added", base, claimsOf(t, "capability.maturity", map[string]string{"value": "gate_public_launch"}, "publish_rule", "text", "file:a.md", map[string]string{"sha256": "00"}, "file:b.md", map[string]string{"sha256": "01"}), []string{"file:b.md"}},
		{"a claim removed", base, claimsOf(t, "capability.maturity", map[string]string{"value": "gate_public_launch"}, "publish_rule", "text"), []string{"file:a.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if got := Changed(tc.old, tc.new); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClaimsDocument(t *testing.T) {
	c := claimsOf(t, "publish_rule", map[string]string{"text": "é \u2028 <b>"}, "capability.maturity", "gate_public_launch")
	doc, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(doc), `{"claims":{"capability.maturity":"gate_public_launch","publish_rule":{"text":"é`) || !strings.HasSuffix(string(doc), `},"format":"proofsite-claims/1"}`) {
		t.Errorf("document %s", doc)
	}
	back, err := ParseClaims(doc)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := c.Hash()
	h2, _ := back.Hash()
	if h1 != h2 || len(Changed(c, back)) != 0 || back.Len() != 2 {
		t.Error("round trip changed the claims")
	}
	if v, ok := back.Value("capability.maturity"); !ok || string(v) != `"gate_public_launch"` {
		t.Errorf("value %s", v)
	}
	for _, bad := range []string{
		`{"claims":{},"format":"proofsite-claims/2"}`,
		`{"claims":{},"format":"proofsite-claims/1","extra":1}`,
		`{"claims":{"a b":1},"format":"proofsite-claims/1"}`,
		`{"claims":{"a":1,"a":2},"format":"proofsite-claims/1"}`,
		`{"claims":[],"format":"proofsite-claims/1"}`,
		`{"claims":{"a":9007199254740993},"format":"proofsite-claims/1"}`,
	} {
		if _, err := ParseClaims([]byte(bad)); !errors.Is(err, ErrInvalidClaims) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	var empty Claims
	if err := empty.Set("bad name", 1); !errors.Is(err, ErrInvalidClaims) {
		t.Errorf("bad name: %v", err)
	}
}

func TestPolicyClaimsRoundTrip(t *testing.T) {
	p := mustPolicy(t, sitePolicyOptions())
	var c Claims
	if err := p.AddClaims(&c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Names(), []string{ClaimActions, ClaimBridgeKeys, ClaimDenied}) {
		t.Errorf("names %v", c.Names())
	}
	back, err := PolicyFromClaims(c)
	if err != nil {
		t.Fatal(err)
	}
	var c2 Claims
	back.AddClaims(&c2)
	if len(Changed(c, c2)) != 0 || back.Keys().String() != p.Keys().String() {
		t.Errorf("round trip changed the policy: %v", Changed(c, c2))
	}
	// A recorded policy goes through NewPolicy's checks again.
	bad := claimsOf(t, ClaimActions, []map[string]any{{"action": "HARD_DELETE", "requires": []string{"BRIDGE_AUTH"}}}, ClaimDenied, []string{}, ClaimBridgeKeys, []any{})
	if _, err := PolicyFromClaims(bad); !errors.Is(err, ErrPolicy) {
		t.Errorf("HARD_DELETE mapped: %v", err)
	}
	wrongID := claimsOf(t, ClaimActions, []any{}, ClaimDenied, []string{}, ClaimBridgeKeys, []map[string]string{{"key_id": string(bridge2.ID()), "public_key": bridge.Public().String()}})
	if _, err := PolicyFromClaims(wrongID); !errors.Is(err, ErrInvalidClaims) {
		t.Errorf("wrong key id: %v", err)
	}
	if _, err := PolicyFromClaims(claimsOf(t, ClaimActions, []any{})); !errors.Is(err, ErrInvalidClaims) {
		t.Errorf("missing claims: %v", err)
	}
}

func TestRecord(t *testing.T) {
	c := claimsOf(t, "publish_rule", "text")
	signed := mustSign(t, testAuthorization(), bridge)
	r := Record{Action: PublicClaimChange, Decision: Allow, AuthorizationID: "auth-1", Authorization: signed, Changed: []string{"publish_rule"}, Claims: c}
	data, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := c.Hash()
	if back.ClaimsSHA256 != h || back.AuthorizationID != "auth-1" || back.Decision != Allow || !bytes.Equal(back.Authorization, signed) || len(Changed(c, back.Claims)) != 0 {
		t.Errorf("round trip: %+v", back)
	}
	if _, err := Verify(back.Authorization, NewKeys(bridge.Public())); err != nil {
		t.Errorf("recorded authorization: %v", err)
	}
	forged := bytes.Replace(data, []byte(`"publish_rule":"text"`), []byte(`"publish_rule":"other"`), 1)
	if _, err := ParseRecord(forged); !errors.Is(err, ErrInvalidClaims) || !strings.Contains(err.Error(), "not the hash") {
		t.Errorf("forged claims: %v", err)
	}
	for _, bad := range [][]byte{
		bytes.Replace(data, []byte(RecordFormat), []byte("other/1"), 1),
		bytes.Replace(data, []byte(`"action":`), []byte(`"extra":1,"action":`), 1),
		[]byte(`{}`),
	} {
		if _, err := ParseRecord(bad); !errors.Is(err, ErrInvalidClaims) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
