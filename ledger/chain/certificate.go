package chain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/keystore"
)

// ErrAnchorRefused marks an anchoring the gate or the chain refused;
// nothing was written.
var ErrAnchorRefused = errors.New("anchor refused")

// CertificateScope is the scope item a CERT_ANCHOR authorization must list
// for the certificate id.
func CertificateScope(id ledger.Hash) string { return "certificate:" + id.String() }

// AnchorRequest asks to anchor one certificate.
type AnchorRequest struct {
	Charter *charter.Charter
	// Certificate is the certificate's JSON; it is anchored in its RFC 8785
	// canonical form, whose SHA-256 is the certificate id.
	Certificate []byte
	// Authorization is a signed Bridge CERT_ANCHOR authorization whose
	// payload_sha256 is the certificate id and whose scope lists
	// CertificateScope(id).
	Authorization []byte
	Now           time.Time // zero means now
}

// AnchorCertificate asks the gate whether the certificate may be anchored
// and, on ALLOW, appends it as a block of kind gate.CertificateKind whose
// payload is the certificate (so its payload_hash is the certificate id).
// The chain must verify, and a certificate already on the spine is not
// anchored twice. A refusal wraps ErrAnchorRefused, says why, and writes
// nothing.
func (c *Chain) AnchorCertificate(ctx context.Context, req AnchorRequest) (ledger.Block, ledger.Hash, error) {
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	id, canon, err := ledger.PayloadHash(req.Certificate)
	if err != nil {
		return ledger.Block{}, id, fmt.Errorf("%w: the certificate is not JSON: %w", ErrAnchorRefused, err)
	}
	policy, err := Policy(req.Charter)
	if err != nil {
		return ledger.Block{}, id, err
	}
	walk, err := c.Walk(ctx)
	if err != nil {
		return ledger.Block{}, id, err
	}
	if !walk.Verdict.Pass() {
		return ledger.Block{}, id, fmt.Errorf("%w: the chain does not verify (%s)", ErrAnchorRefused, walk.Verdict.Verdict)
	}
	for b, err := range c.store.Blocks(ctx) {
		if err != nil {
			return ledger.Block{}, id, err
		}
		if h := b.Header(); h.Kind == gate.CertificateKind && h.PayloadHash == id && !slices.Contains(walk.Verdict.OffSpineRows, h.Index) {
			return ledger.Block{}, id, fmt.Errorf("%w: certificate %s is already anchored at block %d", ErrAnchorRefused, id, h.Index)
		}
	}
	ev := policy.Evaluate(gate.Request{Action: gate.CertAnchor, Scope: []string{CertificateScope(id)}, PayloadSHA256: id,
		Authorization: req.Authorization, Now: req.Now})
	if !ev.Allowed() {
		return ledger.Block{}, id, fmt.Errorf("%w: the gate denied CERT_ANCHOR for certificate %s: %w\nNothing was written", ErrAnchorRefused, id, ev.Err())
	}
	block, err := c.Append(ctx, ledger.Entry{Kind: gate.CertificateKind, Payload: canon, Time: req.Now,
		Description: "Certificate anchored under Bridge authorization " + ev.Authorization.ID})
	if err != nil {
		return ledger.Block{}, id, err
	}
	c.log.Info("certificate anchored", "certificate", id, "block", block.Index(), "authorization", ev.Authorization.ID)
	return block, id, nil
}

// Key returns the instance's key called name (keystore.Keystore.Key), such
// as the key that signs certification previews.
func (c *Chain) Key(name string) (ledger.PrivateKey, error) {
	ks, err := keystore.Open(c.opts.Keys)
	if err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("chain: %w", err)
	}
	return ks.Key(name)
}
