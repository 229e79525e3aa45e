package gate

import (
	"fmt"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// The publish rule (spec 1, publish_rule). Publishing compares the public
// claims of the content with the claims the newest gate_decision.publish
// block on the canonical spine recorded. Unchanged claims publish without an
// authorization and append nothing. Changed claims need a Bridge
// PUBLIC_CLAIM_CHANGE authorization whose scope is exactly the changed claim
// names and whose payload_sha256 is the SHA-256 of the new canonical claims
// document; it is checked under the policy recorded with the previous
// claims (so a content edit cannot pin its own key), must not have been
// used before, and on ALLOW a gate-decision block recording the decision and
// the new claims is appended before the build. The first publish finds no
// recorded claims: every claim counts as changed and the policy of the
// content is the one in effect (trust on first use). A refusal writes
// nothing.
//
// DecidePublish is the decision, a pure function; ledger/chain reads the
// recorded history from the verified chain and appends the record.

// ClaimFilePrefix starts the claim name of a claim file, a content file
// whose text is a public claim: "file:products/gate/README.md".
const ClaimFilePrefix = "file:"

// PublishHistory is what the chain recorded under the publish rule.
type PublishHistory struct {
	// Last is the newest publish record on the canonical spine; nil when
	// nothing is recorded (a first publish).
	Last *Record
	// LastBlock is the index of the block that holds Last.
	LastBlock int64
	// Spent are the authorization ids every record used.
	Spent []string
}

// PublishRequest is one attempt to publish.
type PublishRequest struct {
	Claims Claims  // the content's public claims
	Policy *Policy // the content's policy; in effect only on a first publish
	// Authorization is the signed Bridge authorization, or nil.
	Authorization []byte
	// AuthorizationSource names the authorization in messages (a file).
	AuthorizationSource string
	Now                 time.Time
}

// PublishDecision is the publish rule's answer.
type PublishDecision struct {
	// Unchanged: the claims are those recorded; publish, append nothing.
	Unchanged bool
	// Allowed: the claims changed and the authorization allows exactly
	// the change; append Payload (a Record) with Description first.
	Allowed bool
	// Changed are the claim names that changed, sorted.
	Changed    []string
	ClaimsHash ledger.Hash
	// Report explains the decision for the operator: what changed since
	// when, and on a refusal what to sign or why the gate denied it.
	Report string
	// Evaluation is the gate's evaluation of the authorization, when one
	// was checked.
	Evaluation *Evaluation
	// Payload and Description are the entry to append when Allowed.
	Payload     []byte
	Description string
}

// DecidePublish applies the publish rule to req against what the chain
// recorded. A refusal is a decision (neither Unchanged nor Allowed), not an
// error; errors are for inputs the rule cannot read, such as a recorded
// policy that no longer parses.
func DecidePublish(req PublishRequest, hist PublishHistory) (PublishDecision, error) {
	var d PublishDecision
	var err error
	if d.ClaimsHash, err = req.Claims.Hash(); err != nil {
		return d, err
	}
	policy, since := req.Policy, "no claims are recorded on the chain yet (first publish), so every claim counts as changed"
	d.Changed = req.Claims.Names()
	if hist.Last != nil {
		if policy, err = PolicyFromClaims(hist.Last.Claims); err != nil {
			return d, fmt.Errorf("gate: the policy recorded at block %d: %w", hist.LastBlock, err)
		}
		d.Changed = Changed(hist.Last.Claims, req.Claims)
		since = fmt.Sprintf("compared with the claims recorded at block %d", hist.LastBlock)
	}
	if len(d.Changed) == 0 {
		d.Unchanged = true
		d.Report = fmt.Sprintf("the public claims are unchanged since block %d (claims sha256 %s); no authorization needed, nothing appended",
			hist.LastBlock, d.ClaimsHash)
		if req.Authorization != nil {
			d.Report += "; the authorization given was not used"
		}
		return d, nil
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%d public claim(s) changed; %s:\n", len(d.Changed), since)
	for _, c := range d.Changed {
		fmt.Fprintf(&b, "  changed  %s\n", c)
	}
	fmt.Fprintf(&b, "  new claims sha256 %s\n", d.ClaimsHash)
	if req.Authorization == nil {
		start := req.Now.UTC().Truncate(time.Second)
		draft, _ := ledger.MarshalCanonical(map[string]any{
			"authorization_id": "publish-" + d.ClaimsHash.String()[:12], "action": PublicClaimChange, "scope": d.Changed,
			"issued_at": start.Format(TimeFormat), "expires_at": start.Add(24 * time.Hour).Format(TimeFormat),
			"payload_sha256": d.ClaimsHash.String(),
		})
		fmt.Fprintf(&b, "A PUBLIC_CLAIM_CHANGE needs Bridge authorization (pinned keys: %s). On the Bridge's machine, sign an\n"+
			"authorization for exactly these claims and this hash, for example\n  %s\n"+
			"with \"proofsite gate sign --key BRIDGE_KEY auth.json > signed.json\", then run build --publish --authorization signed.json.\n"+
			"No authorization was given.",
			policy.Keys(), draft)
		d.Report = b.String()
		return d, nil
	}
	ev := policy.Evaluate(Request{
		Action: PublicClaimChange, Scope: d.Changed, ExactScope: true, PayloadSHA256: d.ClaimsHash,
		Authorization: req.Authorization, Spent: hist.Spent, Now: req.Now,
	})
	d.Evaluation = &ev
	if !ev.Allowed() {
		fmt.Fprintf(&b, "The gate denied the authorization in %s:\n", req.AuthorizationSource)
		for _, e := range ev.Errors {
			fmt.Fprintf(&b, "  [%s] %s\n", Code(e), e)
		}
		d.Report = strings.TrimSuffix(b.String(), "\n")
		return d, nil
	}
	canonAuth, err := ledger.Canonicalize(req.Authorization)
	if err != nil {
		return d, err // unreachable: the authorization verified
	}
	if d.Payload, err = (Record{
		Action: PublicClaimChange, Decision: ev.Decision, AuthorizationID: ev.Authorization.ID,
		Authorization: canonAuth, Changed: d.Changed, Claims: req.Claims,
	}).Marshal(); err != nil {
		return d, err
	}
	d.Allowed = true
	d.Description = fmt.Sprintf("gate decision: %s %s under Bridge authorization %s (%s); %d claim(s) changed; claims sha256 %s",
		PublicClaimChange, ev.Decision, ev.Authorization.ID, ev.Authorization.KeyID, len(d.Changed), d.ClaimsHash)
	d.Report = b.String()
	return d, nil
}
