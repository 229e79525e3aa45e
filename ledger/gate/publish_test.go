package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// publishClaims are the content's claims with the policy's own claims
// added, as the chain records them.
func publishClaims(t *testing.T, policy *Policy, maturity string) Claims {
	t.Helper()
	c := claimsOf(t, "capability.maturity", map[string]string{"value": maturity}, "file:products/gate/README.md", map[string]string{"sha256": "00"})
	if err := policy.AddClaims(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecidePublish(t *testing.T) {
	policy := mustPolicy(t, sitePolicyOptions())
	recorded := publishClaims(t, policy, "gate_public_launch")
	changed := publishClaims(t, policy, "gate_general_availability")
	changedHash, err := changed.Hash()
	if err != nil {
		t.Fatal(err)
	}
	sign := func(id string, scope []string, k ledger.PrivateKey) []byte {
		return mustSign(t, Authorization{ID: id, Action: PublicClaimChange, Scope: scope,
			IssuedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour), PayloadSHA256: changedHash}, k)
	}
	history := PublishHistory{Last: &Record{Claims: recorded, AuthorizationID: "first"}, LastBlock: 224, Spent: []string{"first"}}
	// A content edit that pins its own key does not change the policy in
	// effect: the recorded one decides.
	intruderPolicy := mustPolicy(t, PolicyOptions{Actions: sitePolicyOptions().Actions, Denied: sitePolicyOptions().Denied, BridgeKeys: []ledger.PublicKey{outside.Public()}})

	tests := []struct {
		desc      string
		req       PublishRequest
		hist      PublishHistory
		unchanged bool
		allowed   bool
		report    []string
	}{
		{desc: "first publish without authorization",
			req:    PublishRequest{Claims: recorded, Policy: policy, Now: t0},
			report: []string{"first publish", "changed  capability.maturity", `{"action":"PUBLIC_CLAIM_CHANGE"`, "No authorization was given."}},
		{desc: "unchanged", req: PublishRequest{Claims: recorded, Policy: policy, Now: t0}, hist: history, unchanged: true,
			report: []string{"unchanged since block 224"}},
		{desc: "unchanged, authorization unused", req: PublishRequest{Claims: recorded, Policy: policy, Authorization: []byte("{}"), Now: t0}, hist: history, unchanged: true,
			report: []string{"the authorization given was not used"}},
		{desc: "changed without authorization", req: PublishRequest{Claims: changed, Policy: policy, Now: t0}, hist: history,
			report: []string{"1 public claim(s) changed; compared with the claims recorded at block 224", "changed  capability.maturity\n"}},
		{desc: "changed, authorized exactly", hist: history, allowed: true,
			req:    PublishRequest{Claims: changed, Policy: policy, Authorization: sign("second", []string{"capability.maturity"}, bridge), Now: t0},
			report: []string{"changed  capability.maturity"}},
		{desc: "scope wider than the change", hist: history,
			req:    PublishRequest{Claims: changed, Policy: policy, Authorization: sign("wider", []string{"capability.maturity", "publish_rule"}, bridge), AuthorizationSource: "auth.json", Now: t0},
			report: []string{"The gate denied the authorization in auth.json", "[scope]"}},
		{desc: "replayed", hist: history,
			req:    PublishRequest{Claims: changed, Policy: policy, Authorization: sign("first", []string{"capability.maturity"}, bridge), Now: t0},
			report: []string{"[replayed]"}},
		{desc: "the content pins its own key", hist: history,
			req:    PublishRequest{Claims: changed, Policy: intruderPolicy, Authorization: sign("self", []string{"capability.maturity"}, outside), Now: t0},
			report: []string{"[wrong_key]"}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			d, err := DecidePublish(tc.req, tc.hist)
			if err != nil {
				t.Fatal(err)
			}
			if d.Unchanged != tc.unchanged || d.Allowed != tc.allowed {
				t.Fatalf("unchanged %v allowed %v, want %v %v:\n%s", d.Unchanged, d.Allowed, tc.unchanged, tc.allowed, d.Report)
			}
			for _, want := range tc.report {
				if !strings.Contains(d.Report, want) {
					t.Errorf("report lacks %q:\n%s", want, d.Report)
				}
			}
			if !d.Allowed {
				if d.Payload != nil {
					t.Error("a refusal carries a record to append")
				}
				return
			}
			r, err := ParseRecord(d.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if r.AuthorizationID != "second" || r.Decision != Allow || strings.Join(r.Changed, ",") != "capability.maturity" || len(Changed(r.Claims, changed)) != 0 {
				t.Errorf("record %+v", r)
			}
			if !strings.Contains(d.Description, "under Bridge authorization second") {
				t.Errorf("description %q", d.Description)
			}
		})
	}

	// A recorded policy that no longer parses is an error, not a refusal.
	broken := PublishHistory{Last: &Record{Claims: claimsOf(t, ClaimActions, "not a table")}, LastBlock: 9}
	if _, err := DecidePublish(PublishRequest{Claims: changed, Policy: policy, Now: t0}, broken); err == nil || !strings.Contains(err.Error(), "block 9") {
		t.Errorf("broken recorded policy: %v", err)
	}
}
