package live

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// GET /api/v1/verify: a certificate is anchored when a block of kind
// gate.CertificateKind on the canonical spine carries its id as
// payload_hash (the id is the SHA-256 of the certificate's canonical JSON,
// which is the block's payload). The answer carries the evidence a client
// checks without trusting this server: the block, its spine membership,
// and an RFC 6962 inclusion proof of the block's row in the checkpoint,
// signed with the log's key.

// InclusionProver proves a row's inclusion in the Merkle tree of a size
// (ledger/store.Store).
type InclusionProver interface {
	InclusionProof(index, size int64) (tlog.Proof, error)
}

// VerifyInput is GET /api/v1/verify.
type VerifyInput struct {
	Cert string `query:"cert" required:"true" pattern:"^[0-9a-f]{64}$" doc:"The certificate id: 64 lower-case hex digits (certificate_id of a certification)"`
}

// CertVerification is the answer about one certificate.
type CertVerification struct {
	Certificate string         `json:"certificate"`
	Verified    bool           `json:"verified" doc:"true only for a certificate anchored on the canonical spine of a verified chain and included in its checkpoint"`
	Reason      string         `json:"reason"`
	Evidence    *ChainEvidence `json:"evidence" doc:"null unless verified"`
	Fresh
}

// ChainEvidence is what makes a certificate verified.
type ChainEvidence struct {
	Block            BlockRef          `json:"block"`
	PayloadHash      ledger.Hash       `json:"payload_hash" doc:"Equal to the certificate id"`
	PrevHash         ledger.Hash       `json:"prev_hash"`
	OnCanonicalSpine bool              `json:"on_canonical_spine"`
	SpineHead        *ledger.Point     `json:"spine_head"`
	Checkpoint       ledger.Checkpoint `json:"checkpoint" doc:"The Merkle root over every row at a size"`
	SignedCheckpoint *string           `json:"signed_checkpoint" doc:"The checkpoint as a C2SP note signed with the log's key (null when this server publishes none)"`
	LeafIndex        int64             `json:"leaf_index"`
	InclusionProof   []string          `json:"inclusion_proof" doc:"RFC 6962 audit path of the block's row (the leaf is the row's canonical bytes, as in the export), hex"`
}

// certIndex maps certificate ids to the blocks that anchor them; rows are
// only ever appended, so it reads each row once.
type certIndex struct {
	mu     sync.Mutex
	next   int64 // rows read
	blocks map[ledger.Hash][]int64
}

func (d *definition) registerVerify() {
	s := d.s
	idx := &certIndex{}
	huma.Register(d.v1, huma.Operation{OperationID: "verify-certificate", Method: http.MethodGet, Path: "/api/v1/verify", Tags: v1Tags,
		Summary: "Verify a certificate against the chain: verified true with chain evidence when it is anchored, verified false otherwise",
		Errors:  []int{http.StatusServiceUnavailable}},
		func(ctx context.Context, in *VerifyInput) (*reply[CertVerification], error) {
			var id ledger.Hash
			if err := id.UnmarshalText([]byte(in.Cert)); err != nil {
				return nil, problem(http.StatusBadRequest, "invalid-request", "cert must be 64 lower-case hex digits")
			}
			v, err := s.verifyCertificate(ctx, idx, id)
			if err != nil {
				return nil, err
			}
			return &reply[CertVerification]{Body: v}, nil
		})
}

func (s *Server) verifyCertificate(ctx context.Context, idx *certIndex, id ledger.Hash) (CertVerification, error) {
	out := CertVerification{Certificate: id.String(), Fresh: fresh()}
	v, ok := s.chain.Verdict()
	if !ok {
		return out, errNotVerified
	}
	blocks, err := idx.lookup(ctx, s.chain, id)
	if err != nil {
		return out, err
	}
	switch {
	case len(blocks) == 0:
		out.Reason = "no certificate block carries this id: it was never anchored (a certification preview writes nothing to the chain)"
		return out, nil
	case !v.Pass() || v.Checkpoint == nil:
		out.Reason = fmt.Sprintf("the chain does not verify (%s): nothing it holds can be vouched for", v.Verdict)
		return out, nil
	}
	var b ledger.Block
	for _, i := range blocks {
		if !slices.Contains(v.OffSpineRows, i) && v.Head != nil && i <= v.Head.Index {
			for blk, err := range s.chain.Range(ctx, i, i+1) {
				if err != nil {
					return out, err
				}
				b = blk
			}
			break
		}
	}
	if b.IsZero() {
		out.Reason = "the blocks that carry this id are not on the canonical spine"
		return out, nil
	}
	ev := &ChainEvidence{Block: *blockRef(b), PayloadHash: b.Header().PayloadHash, PrevHash: b.Header().PrevHash,
		OnCanonicalSpine: true, SpineHead: v.Head, Checkpoint: *v.Checkpoint, LeafIndex: b.Index()}
	prover, ok := s.chain.(InclusionProver)
	if !ok {
		out.Reason = "this server cannot prove inclusion in its checkpoint"
		return out, nil
	}
	proof, err := prover.InclusionProof(b.Index(), v.Checkpoint.Size)
	if err != nil {
		return out, fmt.Errorf("live: verify: inclusion proof: %w", err)
	}
	if err := tlog.VerifyInclusion(tlog.LeafHash(b.Leaf()), uint64(b.Index()), uint64(v.Checkpoint.Size), proof, tlog.Hash(v.Checkpoint.Root)); err != nil {
		out.Reason = "the block's inclusion proof does not check against the checkpoint"
		return out, nil
	}
	for _, h := range proof {
		ev.InclusionProof = append(ev.InclusionProof, h.String())
	}
	if ev.InclusionProof == nil {
		ev.InclusionProof = []string{}
	}
	if s.opts.Publisher != nil {
		note, err := s.opts.Publisher.SignCheckpoint(*v.Checkpoint)
		if err != nil {
			return out, fmt.Errorf("live: verify: signing the checkpoint: %w", err)
		}
		text := string(note)
		ev.SignedCheckpoint = &text
	}
	out.Verified, out.Evidence = true, ev
	out.Reason = fmt.Sprintf("anchored at block %d on the canonical spine of a verified chain, included in the checkpoint of %d rows", b.Index(), v.Checkpoint.Size)
	return out, nil
}

// lookup returns the indexes of the certificate blocks whose payload_hash
// is id, reading the rows appended since the last lookup first.
func (x *certIndex) lookup(ctx context.Context, c Chain, id ledger.Hash) ([]int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.blocks == nil {
		x.blocks = map[ledger.Hash][]int64{}
	}
	for b, err := range c.Range(ctx, x.next, c.Count()) {
		if err != nil {
			return nil, err
		}
		if h := b.Header(); h.Kind == gate.CertificateKind {
			x.blocks[h.PayloadHash] = append(x.blocks[h.PayloadHash], h.Index)
		}
		x.next = b.Index() + 1
	}
	return slices.Clone(x.blocks[id]), nil
}
