package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/site/content"
)

// The publish rule (spec 1, publish_rule): "proofsite build --publish"
// compares the public claims of the content with the claims the newest
// gate_decision.publish block on the canonical spine recorded. Unchanged
// claims publish without an authorization and append nothing. Changed
// claims need a Bridge PUBLIC_CLAIM_CHANGE authorization whose scope is
// exactly the changed claim names and whose payload_sha256 is the SHA-256
// of the new canonical claims document; it is checked under the policy
// recorded with the previous claims (so a content edit cannot pin its own
// key), must not have been used before, and on ALLOW a gate-decision block
// recording the decision and the new claims is appended before the build.
// The first publish finds no recorded claims: every claim counts as changed
// and the policy of the content is the one in effect (trust on first use).
// A refusal writes nothing, to the chain or to the output.

// errPublishRefused marks a publish the rule refused; nothing was written.
var errPublishRefused = errors.New("publish refused")

// Claim names besides the gate policy's own (gate.ClaimActions, …) and the
// claim files ("file:" + path).
const (
	claimCapabilityPrefix = "capability."
	claimPublishRule      = "publish_rule"
	claimSeams            = "ledger.documented_seams"
)

// publicClaims is the claims document of the content: every row of the
// capability board (its maturity values, the enforcement model), the
// publish rule, the gate policy (action table, denied actions, pinned
// Bridge keys), the documented strict-table seams, and the SHA-256 of each
// claim file.
func publicClaims(contentDir string, cfg *content.Config, policy *gate.Policy) (gate.Claims, error) {
	var c gate.Claims
	for _, cp := range cfg.Capabilities {
		if err := c.Set(claimCapabilityPrefix+cp.Key, map[string]string{"value": cp.Value, "note": cp.Note}); err != nil {
			return c, err
		}
	}
	pr := cfg.PublishRule
	if err := c.Set(claimPublishRule, map[string]string{"key": pr.Key, "action": pr.Action, "requires": pr.Requires, "text": pr.Text, "disclaimer": pr.Disclaimer}); err != nil {
		return c, err
	}
	if err := policy.AddClaims(&c); err != nil {
		return c, err
	}
	seams := []map[string]any{}
	for _, s := range cfg.Ledger.DocumentedSeams {
		seams = append(seams, map[string]any{"block": s.Block, "reason": s.Reason, "documented": s.Documented.String()})
	}
	if err := c.Set(claimSeams, seams); err != nil {
		return c, err
	}
	for _, f := range cfg.Gate.ClaimFiles {
		data, err := os.ReadFile(filepath.Join(contentDir, filepath.FromSlash(f)))
		if err != nil {
			return c, fmt.Errorf("claim file %s (site.yaml gate.claim_files): %w", f, err)
		}
		sum := sha256.Sum256(data)
		if err := c.Set(content.ClaimFilePrefix+f, map[string]string{"sha256": hex.EncodeToString(sum[:])}); err != nil {
			return c, err
		}
	}
	return c, nil
}

// publishRecord is the newest publish decision on the spine, and every
// authorization id the chain has seen used.
type publishRecord struct {
	block  ledger.Block // zero when nothing is recorded
	record gate.Record
	spent  []string
}

// lastPublish reads the gate_decision.publish blocks of a verified chain:
// only those on the canonical spine count, and each private payload must
// hash to its block's payload_hash before it is read.
func lastPublish(ctx context.Context, s *store.Store, v ledger.Verdict) (publishRecord, error) {
	var out publishRecord
	for b, err := range s.Blocks(ctx) {
		if err != nil {
			return out, err
		}
		if b.Header().Kind != gate.PublishKind || slices.Contains(v.OffSpineRows, b.Index()) {
			continue
		}
		p, err := s.Private(b.Index())
		if err != nil {
			return out, err
		}
		if h, _, err := ledger.PayloadHash(p.Payload); err != nil || h != b.Header().PayloadHash {
			return out, fmt.Errorf("block %d: its private payload does not hash to its payload_hash; refusing to trust it", b.Index())
		}
		r, err := gate.ParseRecord(p.Payload)
		if err != nil {
			return out, fmt.Errorf("block %d: %w", b.Index(), err)
		}
		out.spent = append(out.spent, r.AuthorizationID)
		out.block, out.record = b, r
	}
	return out, nil
}

// publish applies the publish rule before a build. It returns a summary
// line to print, or an error wrapping errPublishRefused when the rule
// refuses; in that case nothing was written.
func publish(ctx context.Context, env *environment, f siteFlags, authFile string, now time.Time) (string, error) {
	cfg, err := content.LoadConfig(os.DirFS(f.content))
	if err != nil {
		return "", err
	}
	contentPolicy, err := sitePolicy(cfg)
	if err != nil {
		return "", err
	}
	claims, err := publicClaims(f.content, cfg, contentPolicy)
	if err != nil {
		return "", err
	}
	claimsHash, err := claims.Hash()
	if err != nil {
		return "", err
	}
	var auth []byte
	if authFile != "" {
		if auth, err = readInput(env, authFile, gate.MaxAuthorizationSize); err != nil {
			return "", err
		}
	}

	lf := ledgerFlags{data: f.data, content: f.content}
	signers, err := loadSigners(f.data)
	if err != nil {
		return "", fmt.Errorf("%w: publishing records the decision on the chain: %w", errPublishRefused, err)
	}
	s, err := lf.openStore(env, "", ledger.Hash{})
	if err != nil {
		return "", fmt.Errorf("%w: %w", errPublishRefused, err)
	}
	defer s.Close()
	walk, err := s.FullWalk(ctx, nil, nil)
	if err != nil {
		return "", err
	}
	if !walk.Verdict.Pass() {
		return "", fmt.Errorf("%w: the chain does not verify (%s); its recorded claims cannot be trusted", errPublishRefused, walk.Verdict.Verdict)
	}
	last, err := lastPublish(ctx, s, walk.Verdict)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errPublishRefused, err)
	}

	policy, since := contentPolicy, "no claims are recorded on the chain yet (first publish), so every claim counts as changed"
	changed := claims.Names()
	if !last.block.IsZero() {
		if policy, err = gate.PolicyFromClaims(last.record.Claims); err != nil {
			return "", fmt.Errorf("%w: the policy recorded at block %d: %w", errPublishRefused, last.block.Index(), err)
		}
		changed = gate.Changed(last.record.Claims, claims)
		since = fmt.Sprintf("compared with the claims recorded at block %d", last.block.Index())
	}
	if len(changed) == 0 {
		msg := fmt.Sprintf("publish: the public claims are unchanged since block %d (claims sha256 %s); no authorization needed, nothing appended",
			last.block.Index(), claimsHash)
		if authFile != "" {
			msg += "; --authorization was not used"
		}
		return msg, nil
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%d public claim(s) changed; %s:\n", len(changed), since)
	for _, c := range changed {
		fmt.Fprintf(&b, "  changed  %s\n", c)
	}
	fmt.Fprintf(&b, "  new claims sha256 %s\n", claimsHash)
	if authFile == "" {
		start := now.UTC().Truncate(time.Second)
		draft, _ := ledger.MarshalCanonical(map[string]any{
			"authorization_id": "publish-" + claimsHash.String()[:12], "action": gate.PublicClaimChange, "scope": changed,
			"issued_at": start.Format(gate.TimeFormat), "expires_at": start.Add(24 * time.Hour).Format(gate.TimeFormat),
			"payload_sha256": claimsHash.String(),
		})
		fmt.Fprintf(&b, "A PUBLIC_CLAIM_CHANGE needs Bridge authorization (pinned keys: %s). On the Bridge's machine, sign an\n"+
			"authorization for exactly these claims and this hash, for example\n  %s\n"+
			"with \"proofsite gate sign --key BRIDGE_KEY auth.json > signed.json\", then run build --publish --authorization signed.json.\n",
			policy.Keys(), draft)
		fmt.Fprintf(&b, "Nothing was written: the chain and %s are unchanged.", f.out)
		return "", fmt.Errorf("%w: no --authorization given; %s", errPublishRefused, b.String())
	}
	ev := policy.Evaluate(gate.Request{
		Action: gate.PublicClaimChange, Scope: changed, ExactScope: true, PayloadSHA256: claimsHash,
		Authorization: auth, Spent: last.spent, Now: now,
	})
	if !ev.Allowed() {
		fmt.Fprintf(&b, "The gate denied the authorization in %s:\n", authFile)
		for _, e := range ev.Errors {
			fmt.Fprintf(&b, "  [%s] %s\n", gate.Code(e), e)
		}
		fmt.Fprintf(&b, "Nothing was written: the chain and %s are unchanged.", f.out)
		return "", fmt.Errorf("%w: %s", errPublishRefused, b.String())
	}
	if _, err := content.Load(os.DirFS(f.content)); err != nil {
		return "", err // the whole site must be valid before the chain changes
	}
	canonAuth, err := ledger.Canonicalize(auth)
	if err != nil {
		return "", err // unreachable: the authorization verified
	}
	payload, err := gate.Record{
		Action: gate.PublicClaimChange, Decision: ev.Decision, AuthorizationID: ev.Authorization.ID,
		Authorization: canonAuth, Changed: changed, Claims: claims,
	}.Marshal()
	if err != nil {
		return "", err
	}
	block, err := s.AppendEntry(ctx, store.Entry{
		Kind: gate.PublishKind, Payload: payload, Time: now,
		Description: fmt.Sprintf("gate decision: %s %s under Bridge authorization %s (%s); %d claim(s) changed; claims sha256 %s",
			gate.PublicClaimChange, ev.Decision, ev.Authorization.ID, ev.Authorization.KeyID, len(changed), claimsHash),
	}, signers)
	if err != nil {
		return "", err
	}
	env.logger.Info("publish: gate decision recorded", "block", block.Index(), "authorization", ev.Authorization.ID, "changed", len(changed))
	return fmt.Sprintf("publish: %sgate decision ALLOW under authorization %s recorded at block %d %s (claims sha256 %s)",
		b.String(), ev.Authorization.ID, block.Index(), block.Hash(), claimsHash), nil
}
