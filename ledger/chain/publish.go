package chain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/gate"
)

// ErrPublishRefused marks a publish the rule refused; nothing was written.
var ErrPublishRefused = errors.New("publish refused")

// Claim names besides the gate policy's own (gate.ClaimActions, …) and the
// claim files (gate.ClaimFilePrefix + path).
const (
	claimCapabilityPrefix = "capability."
	claimPublishRule      = "publish_rule"
	claimSeams            = "ledger.documented_seams"
)

// PolicyOptions maps the charter's gate section to the checkpoint's own
// types (the gate knows nothing of the charter).
func PolicyOptions(c *charter.Charter) (gate.PolicyOptions, error) {
	var opts gate.PolicyOptions
	for _, a := range c.Gate.Actions {
		rule := gate.ActionRule{Action: gate.Action(a.Action)}
		for _, ctl := range a.Requires {
			rule.Requires = append(rule.Requires, gate.Control(ctl))
		}
		opts.Actions = append(opts.Actions, rule)
	}
	for _, a := range c.Gate.Denied {
		opts.Denied = append(opts.Denied, gate.Action(a))
	}
	for _, k := range c.Gate.BridgeKeys {
		pub, err := ledger.ParsePublicKeyHex(k.PublicKey)
		if err != nil {
			return gate.PolicyOptions{}, fmt.Errorf("chain: site.yaml gate.bridge_keys %s: %w", k.KeyID, err)
		}
		opts.BridgeKeys = append(opts.BridgeKeys, pub)
	}
	return opts, nil
}

// Policy is the checkpoint the charter configures.
func Policy(c *charter.Charter) (*gate.Policy, error) {
	opts, err := PolicyOptions(c)
	if err != nil {
		return nil, err
	}
	return gate.NewPolicy(opts)
}

// Demo runs the checkpoint's demo with the charter's policy and board: the
// bytes of /products/gate/demo_output.txt and of "proofsite gate demo".
func Demo(c *charter.Charter, source string) ([]byte, error) {
	opts, err := PolicyOptions(c)
	if err != nil {
		return nil, err
	}
	d := gate.DemoOptions{Policy: opts, Source: source}
	for _, cp := range c.Capabilities {
		d.Board = append(d.Board, gate.BoardRow{Key: cp.Key, Value: cp.Value})
	}
	return gate.Demo(d)
}

// PublicClaims is the claims document of the content: every row of the
// capability board (its maturity values, the enforcement model), the
// publish rule, the gate policy (action table, denied actions, pinned
// Bridge keys), the documented strict-table seams, and the SHA-256 of each
// claim file, read from content.
func PublicClaims(c *charter.Charter, content fs.FS, policy *gate.Policy) (gate.Claims, error) {
	var claims gate.Claims
	for _, cp := range c.Capabilities {
		if err := claims.Set(claimCapabilityPrefix+cp.Key, map[string]string{"value": cp.Value, "note": cp.Note}); err != nil {
			return claims, err
		}
	}
	pr := c.PublishRule
	if err := claims.Set(claimPublishRule, map[string]string{"key": pr.Key, "action": pr.Action, "requires": pr.Requires, "text": pr.Text, "disclaimer": pr.Disclaimer}); err != nil {
		return claims, err
	}
	if err := policy.AddClaims(&claims); err != nil {
		return claims, err
	}
	seams := []map[string]any{}
	for _, s := range c.Ledger.DocumentedSeams {
		seams = append(seams, map[string]any{"block": s.Block, "reason": s.Reason, "documented": s.Documented.String()})
	}
	if err := claims.Set(claimSeams, seams); err != nil {
		return claims, err
	}
	for _, f := range c.Gate.ClaimFiles {
		data, err := fs.ReadFile(content, f)
		if err != nil {
			return claims, fmt.Errorf("chain: claim file %s (site.yaml gate.claim_files): %w", f, err)
		}
		sum := sha256.Sum256(data)
		if err := claims.Set(gate.ClaimFilePrefix+f, map[string]string{"sha256": hex.EncodeToString(sum[:])}); err != nil {
			return claims, err
		}
	}
	return claims, nil
}

// PublishRequest asks to publish the content whose charter and files are
// given.
type PublishRequest struct {
	Charter *charter.Charter
	Content fs.FS // the content folder, for the claim files
	// Authorization is a signed Bridge authorization, or nil.
	Authorization []byte
	// AuthorizationSource names it in messages (a file name).
	AuthorizationSource string
	Now                 time.Time // zero means now
}

// Publish applies the publish rule (see ledger/gate) against this chain:
// it verifies the chain, reads the decisions recorded on its canonical
// spine, decides, and on ALLOW appends the decision before returning. It
// returns a summary line; a refusal is an error wrapping ErrPublishRefused
// that explains what to do, and writes nothing.
func (c *Chain) Publish(ctx context.Context, req PublishRequest) (string, error) {
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	policy, err := Policy(req.Charter)
	if err != nil {
		return "", err
	}
	claims, err := PublicClaims(req.Charter, req.Content, policy)
	if err != nil {
		return "", err
	}
	walk, err := c.Walk(ctx)
	if err != nil {
		return "", err
	}
	if !walk.Verdict.Pass() {
		return "", fmt.Errorf("%w: the chain does not verify (%s); its recorded claims cannot be trusted", ErrPublishRefused, walk.Verdict.Verdict)
	}
	hist, err := c.publishHistory(ctx, walk.Verdict)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPublishRefused, err)
	}
	d, err := gate.DecidePublish(gate.PublishRequest{Claims: claims, Policy: policy, Authorization: req.Authorization,
		AuthorizationSource: req.AuthorizationSource, Now: req.Now}, hist)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrPublishRefused, err)
	case d.Unchanged:
		return "publish: " + d.Report, nil
	case !d.Allowed:
		return "", fmt.Errorf("%w: %s\nNothing was written", ErrPublishRefused, d.Report)
	}
	block, err := c.Append(ctx, ledger.Entry{Kind: gate.PublishKind, Payload: d.Payload, Time: req.Now, Description: d.Description})
	if err != nil {
		return "", err
	}
	c.log.Info("publish: gate decision recorded", "block", block.Index(), "authorization", d.Evaluation.Authorization.ID, "changed", len(d.Changed))
	return fmt.Sprintf("publish: %sgate decision ALLOW under authorization %s recorded at block %d %s (claims sha256 %s)",
		d.Report, d.Evaluation.Authorization.ID, block.Index(), block.Hash(), d.ClaimsHash), nil
}

// publishHistory reads the gate_decision.publish blocks of a verified
// chain: only those on the canonical spine count, and each private payload
// must hash to its block's payload_hash before it is read.
func (c *Chain) publishHistory(ctx context.Context, v ledger.Verdict) (gate.PublishHistory, error) {
	var h gate.PublishHistory
	for b, err := range c.store.Blocks(ctx) {
		if err != nil {
			return h, err
		}
		if b.Header().Kind != gate.PublishKind || slices.Contains(v.OffSpineRows, b.Index()) {
			continue
		}
		p, err := c.store.Private(b.Index())
		if err != nil {
			return h, err
		}
		if ph, _, err := ledger.PayloadHash(p.Payload); err != nil || ph != b.Header().PayloadHash {
			return h, fmt.Errorf("block %d: its private payload does not hash to its payload_hash; refusing to trust it", b.Index())
		}
		r, err := gate.ParseRecord(p.Payload)
		if err != nil {
			return h, fmt.Errorf("block %d: %w", b.Index(), err)
		}
		h.Spent = append(h.Spent, r.AuthorizationID)
		h.Last, h.LastBlock = &r, b.Index()
	}
	return h, nil
}
