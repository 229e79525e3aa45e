package live

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
)

// Chain is what the live edge reads of the ledger; *store.Store provides it.
// Handlers call these typed methods and never see storage keys.
type Chain interface {
	// Verdict is the cached verdict, extended on every append; false until
	// the first full walk has run.
	Verdict() (ledger.Verdict, bool)
	// StrictTable is the strict table of the last verification.
	StrictTable() (ledger.StrictTable, bool)
	// Range yields the blocks with from <= index < to, in index order.
	Range(ctx context.Context, from, to int64) iter.Seq2[ledger.Block, error]
	// Head is the stored row with the highest index; the spine's head is
	// the verdict's.
	Head() ledger.Block
	Genesis() ledger.Block
	Count() int64
	Day(now time.Time) int64
	// Keys, GenesisHash, Seams and WitnessQuorum are the pins the chain is
	// verified with (its trust document's).
	Keys() ledger.KeySet
	GenesisHash() ledger.Hash
	Seams() []ledger.Seam
	WitnessQuorum() int
	// Version grows whenever Verdict, StrictTable, Head or Count would
	// answer differently; documents derived from the chain are kept per
	// version.
	Version() uint64
}

// Publisher is what the instance's chain publishes for verifiers beyond
// the store's rows: its checkpoints signed with the log's key, and the
// export. cmd passes the instance's chain (ledger/chain.Chain).
type Publisher interface {
	// SignCheckpoint returns cp as a C2SP signed note.
	SignCheckpoint(cp ledger.Checkpoint) ([]byte, error)
	// Export writes the JSONL export: a header carrying the signed
	// checkpoint over exactly the rows that follow, then every row, read
	// from one snapshot; private adds descriptions and payloads (never
	// asked for here).
	Export(ctx context.Context, w io.Writer, private bool) error
}

// errNotVerified answers while the first full walk has not finished.
var errNotVerified = problem(http.StatusServiceUnavailable, "unavailable", "the ledger has not been verified yet; retry in a moment")

// VerdictResponse is the ledger verdict of spec 2.1 at request time.
type VerdictResponse struct {
	ledger.Verdict
	Fresh
	doc []byte // the Verdict's encoding, when the handler has it (see docMemo)
}

func (r VerdictResponse) encoded() ([]byte, time.Time) { return r.doc, r.GeneratedAt }

// TableResponse is the strict table of spec 2.2: every row in index order,
// the documented seams included, public metadata only.
type TableResponse struct {
	OK                      bool              `json:"ok" doc:"The verdict passes: the canonical spine is valid and every strict-table break is documented"`
	CanonicalSpineValid     *bool             `json:"canonical_spine_valid"`
	StrictTableValid        *bool             `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64            `json:"strict_table_break_at_block"`
	Verdict                 string            `json:"verdict"`
	MetadataOnly            bool              `json:"metadata_only" doc:"Always true: descriptions and payload preimages are never published here"`
	Breaks                  []ledger.Break    `json:"breaks"`
	DocumentedSeams         []ledger.Seam     `json:"documented_seams"`
	OffSpineRows            []int64           `json:"off_spine_rows"`
	RowCount                int               `json:"row_count"`
	Rows                    []json.RawMessage `json:"rows" doc:"Every block's public metadata in the export format (index, timestamp, kind, payload_hash, prev_hash, writer, hash, signature, witnesses), with on_spine and the row's strict-table break, if any"`
	Fresh
}

// TableQuery are the strict table's query parameters; both are refused.
type TableQuery struct {
	Preimage    bool `query:"preimage" doc:"Refused: the public table is metadata-only (anyone can rebuild a header's preimage from the row itself)"`
	Description bool `query:"description" doc:"Refused: descriptions stay private"`
}

// BlockRef names one block.
type BlockRef struct {
	Index     int64       `json:"index"`
	Hash      ledger.Hash `json:"hash"`
	Timestamp string      `json:"timestamp"`
	Kind      string      `json:"kind"`
}

func blockRef(b ledger.Block) *BlockRef {
	if b.IsZero() {
		return nil
	}
	h := b.Header()
	return &BlockRef{Index: h.Index, Hash: b.Hash(), Timestamp: h.Timestamp, Kind: h.Kind}
}

// ChainStatus is spec 2.3: where the chain stands, its published keys and
// how fresh the verification is.
type ChainStatus struct {
	ChainState
	Fresh
	doc []byte // the ChainState's encoding, when the handler has it (see docMemo)
}

func (st ChainStatus) encoded() ([]byte, time.Time) { return st.doc, st.GeneratedAt }

// ChainState is a ChainStatus without its generation time: it changes only
// with the chain (and the day).
type ChainState struct {
	Status              string     `json:"status" enum:"ok,failing,verifying"`
	Day                 int64      `json:"day" doc:"Days since the genesis block"`
	Head                *BlockRef  `json:"head" doc:"The canonical spine's head, as verified (null until the first full walk)"`
	CanonicalSpineValid *bool      `json:"canonical_spine_valid"`
	Verdict             string     `json:"verdict"`
	Blocks              int64      `json:"blocks" doc:"Rows stored, on and off the spine"`
	LastFullWalkAt      *time.Time `json:"last_full_walk_at"`
	ChainPins
}

// ChainPins are what a verifier pins and keeps, as this server verifies
// with them: the trust document's keys, genesis, seams and quorum (also
// published whole at /keys.json), and the signed checkpoint to remember.
type ChainPins struct {
	Genesis          *BlockRef             `json:"genesis" doc:"The pinned genesis block"`
	Keys             []ledger.PublishedKey `json:"keys" doc:"Writer, witness and Bridge keys; pin them (the whole trust document is /keys.json)"`
	DocumentedSeams  []ledger.Seam         `json:"documented_seams" doc:"The documented strict-table seams, each pinned by its row's hash and prev_hash"`
	WitnessQuorum    int                   `json:"witness_quorum" doc:"Distinct pinned witness signatures every block needs"`
	Checkpoint       *ledger.Checkpoint    `json:"checkpoint" doc:"The log's origin, size and RFC 6962 Merkle root over every row"`
	SignedCheckpoint *string               `json:"signed_checkpoint" doc:"The checkpoint as a C2SP signed note (tlog-checkpoint), signed with the log's checkpoint key; null unless the verdict passes. Keep it: a later chain must extend it (verify-ledger --checkpoint FILE)"`
}

// LatestState is the latest public chain state on the API origin.
type LatestState struct {
	Head                json.RawMessage `json:"head" doc:"The canonical spine head's public metadata, as verified (null until the first full walk)"`
	Blocks              int64           `json:"blocks"`
	CanonicalSpineValid *bool           `json:"canonical_spine_valid"`
	Verdict             string          `json:"verdict"`
	ChainPins
	Fresh
}

var proofTags = []string{"Proof surface"}

func (d *definition) registerProof() {
	s := d.s
	get(d.proof, "/api/ledger/verify", "ledger-verify", "Ledger verdict", proofTags, func(context.Context) (VerdictResponse, error) {
		return s.verdict()
	})

	table := func(ctx context.Context, q *TableQuery) (*reply[TableResponse], error) {
		if q.Preimage || q.Description {
			return nil, problem(http.StatusForbidden, "metadata-only",
				"the public strict table is metadata-only: descriptions and hash preimages are not published. "+
					"Every row carries the public header fields its hash covers, so rebuild the preimage (RFC 8785 canonical JSON of index, kind, payload_hash, prev_hash, timestamp, writer) and recompute the hash yourself")
		}
		return s.strictTable(ctx)
	}
	for _, p := range []struct{ path, id, summary string }{
		{"/api/ledger/strict-table", "ledger-strict-table", "Strict table: every row, metadata only"},
		{"/api/chain/strict-table", "chain-strict-table", "Strict table (alias of /api/ledger/strict-table)"},
		{"/api/ledger/rows", "ledger-rows", "Strict table (alias of /api/ledger/strict-table)"},
	} {
		huma.Register(d.proof, huma.Operation{OperationID: p.id, Method: http.MethodGet, Path: p.path, Summary: p.summary, Tags: proofTags,
			Errors: []int{http.StatusForbidden}}, table)
	}

	get(d.proof, "/api/chain/status", "chain-status", "Chain status", proofTags, func(context.Context) (ChainStatus, error) {
		return s.chainStatus(), nil
	})
	d.registerExport()
	get(d.proof, "/api/openapi", "openapi-pointer", "Where the canonical API description lives", proofTags, func(context.Context) (OpenAPIPointer, error) {
		return OpenAPIPointer{Canonical: s.site.APIURL + "/api/v1/openapi.json", ProofSurface: s.site.BaseURL + "/openapi.json", Fresh: fresh()}, nil
	})
}

// OpenAPIPointer points to the API descriptions.
type OpenAPIPointer struct {
	Canonical    string `json:"canonical" doc:"The canonical description of the verification API"`
	ProofSurface string `json:"proof_surface" doc:"The description of the proof surface and gate discovery"`
	Fresh
}

// verdict is the served verdict, from the memo while the chain is unchanged.
func (s *Server) verdict() (VerdictResponse, error) {
	version := s.chain.Version() // before the verdict: see docMemo.get
	v, ok := s.chain.Verdict()
	if !ok {
		return VerdictResponse{}, errNotVerified
	}
	// On an error doc is nil: huma encodes the response itself, and reports it.
	v, doc, _ := s.verdictJSON.get(version, 0, func() ledger.Verdict { return v })
	return VerdictResponse{Verdict: v, Fresh: fresh(), doc: doc}, nil
}

func (s *Server) strictTable(ctx context.Context) (*reply[TableResponse], error) {
	v, ok := s.chain.Verdict()
	table, tok := s.chain.StrictTable()
	if !ok || !tok {
		return nil, errNotVerified
	}
	resp := TableResponse{
		OK: v.Pass(), CanonicalSpineValid: &v.CanonicalSpineValid, StrictTableValid: &v.StrictTableValid,
		StrictTableBreakAtBlock: v.StrictTableBreakAtBlock, Verdict: v.Verdict, MetadataOnly: true,
		Breaks: nonNil(table.Breaks), DocumentedSeams: nonNil(s.chain.Seams()), OffSpineRows: nonNil(v.OffSpineRows),
	}
	// Every stored row, from one snapshot; the verdict annotates those it
	// covers.
	blocks := make([]ledger.Block, 0, s.chain.Count())
	for b, err := range s.chain.Range(ctx, 0, -1) {
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	resp.Rows = make([]json.RawMessage, len(blocks))
	for i, row := range ledger.NewTableRows(blocks, 0, v) {
		raw, err := row.MarshalJSON()
		if err != nil {
			return nil, err
		}
		resp.Rows[i] = raw
	}
	resp.RowCount = len(resp.Rows)
	resp.Fresh = fresh()
	return &reply[TableResponse]{Body: resp}, nil
}

func (s *Server) chainStatus() ChainStatus {
	now := time.Now()
	// On an error doc is nil: huma encodes the status itself, and reports it.
	state, doc, _ := s.statusJSON.get(s.chain.Version(), s.chain.Day(now), func() ChainState { return s.chainState(now) })
	return ChainStatus{ChainState: state, Fresh: Fresh{GeneratedAt: now.UTC()}, doc: doc}
}

// chainState reads the chain status from the chain.
func (s *Server) chainState(now time.Time) ChainState {
	st := ChainState{Status: "verifying", Day: s.chain.Day(now), Blocks: s.chain.Count()}
	v, ok := s.chain.Verdict()
	if ok {
		st.Status = "failing"
		if v.Pass() {
			st.Status = "ok"
		}
		st.CanonicalSpineValid, st.Verdict, st.LastFullWalkAt = &v.CanonicalSpineValid, v.Verdict, v.LastFullWalkAt
		if v.Head != nil {
			st.Head = pointRef(*v.Head, s.chain.Head())
		}
	}
	st.ChainPins = s.chainPins(v, ok)
	return st
}

// pointRef names a verified block; its time and kind come from stored, the
// stored head, when that is the same block.
func pointRef(p ledger.Point, stored ledger.Block) *BlockRef {
	ref := &BlockRef{Index: p.Index, Hash: p.Hash}
	if !stored.IsZero() && stored.Hash() == p.Hash {
		ref = blockRef(stored)
	}
	return ref
}

// chainPins are the pins and, for a passing verdict v, its signed
// checkpoint.
func (s *Server) chainPins(v ledger.Verdict, verified bool) ChainPins {
	p := ChainPins{Keys: s.chain.Keys().Published(), DocumentedSeams: nonNil(s.chain.Seams()), WitnessQuorum: s.chain.WitnessQuorum()}
	if g := s.chain.GenesisHash(); !g.IsZero() {
		p.Genesis = pointRef(ledger.Point{Index: 0, Hash: g}, s.chain.Genesis())
	}
	if !verified {
		return p
	}
	p.Checkpoint = v.Checkpoint
	if v.Pass() && v.Checkpoint != nil && s.opts.Publisher != nil {
		note, err := s.opts.Publisher.SignCheckpoint(*v.Checkpoint)
		if err != nil {
			s.log.Error("signing the checkpoint", "err", err)
		} else {
			text := string(note)
			p.SignedCheckpoint = &text
		}
	}
	return p
}

func (s *Server) latestState(ctx context.Context) (LatestState, error) {
	st := LatestState{Head: json.RawMessage("null"), Blocks: s.chain.Count()}
	v, ok := s.chain.Verdict()
	if ok {
		st.CanonicalSpineValid, st.Verdict = &v.CanonicalSpineValid, v.Verdict
		if v.Head != nil {
			for b, err := range s.chain.Range(ctx, v.Head.Index, v.Head.Index+1) {
				if err != nil {
					return LatestState{}, err
				}
				if b.Hash() == v.Head.Hash {
					if st.Head, err = b.MarshalJSON(); err != nil {
						return LatestState{}, err
					}
				}
			}
		}
	}
	st.ChainPins = s.chainPins(v, ok)
	st.Fresh = fresh()
	return st, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
