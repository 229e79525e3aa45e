package live

import (
	"context"
	"encoding/json"
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
	Head() ledger.Block
	Genesis() ledger.Block
	Count() int64
	Day(now time.Time) int64
	Keys() ledger.KeySet
	// Version grows whenever Verdict, StrictTable, Head or Count would
	// answer differently; documents derived from the chain are kept per
	// version.
	Version() uint64
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
	Status              string                `json:"status" enum:"ok,failing,verifying"`
	Day                 int64                 `json:"day" doc:"Days since the genesis block"`
	Head                *BlockRef             `json:"head"`
	Genesis             *BlockRef             `json:"genesis"`
	CanonicalSpineValid *bool                 `json:"canonical_spine_valid"`
	Verdict             string                `json:"verdict"`
	Blocks              int64                 `json:"blocks"`
	Checkpoint          *ledger.Checkpoint    `json:"checkpoint" doc:"Keep it: a later chain must extend it (verify-ledger --checkpoint)"`
	Keys                []ledger.PublishedKey `json:"keys" doc:"Writer and witness keys; pin them"`
	LastFullWalkAt      *time.Time            `json:"last_full_walk_at"`
}

// LatestState is the latest public chain state on the API origin.
type LatestState struct {
	Head                json.RawMessage    `json:"head" doc:"The head block's public metadata"`
	Checkpoint          *ledger.Checkpoint `json:"checkpoint"`
	Blocks              int64              `json:"blocks"`
	CanonicalSpineValid *bool              `json:"canonical_spine_valid"`
	Verdict             string             `json:"verdict"`
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
		Breaks: nonNil(table.Breaks), DocumentedSeams: nonNil(v.DocumentedSeams), OffSpineRows: nonNil(v.OffSpineRows),
	}
	// The rows the verdict covers: appends after this moment wait for the
	// next request.
	n := v.RowsChecked + v.AppendedSinceWalk
	blocks := make([]ledger.Block, 0, n)
	for b, err := range s.chain.Range(ctx, 0, n) {
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
	st := ChainState{Status: "verifying", Day: s.chain.Day(now), Head: blockRef(s.chain.Head()), Genesis: blockRef(s.chain.Genesis()),
		Blocks: s.chain.Count(), Keys: s.chain.Keys().Published()}
	if v, ok := s.chain.Verdict(); ok {
		st.Status = "failing"
		if v.Pass() {
			st.Status = "ok"
		}
		st.CanonicalSpineValid, st.Verdict, st.Checkpoint, st.LastFullWalkAt = &v.CanonicalSpineValid, v.Verdict, v.Checkpoint, v.LastFullWalkAt
	}
	return st
}

func (s *Server) latestState() (LatestState, error) {
	head := s.chain.Head()
	raw, err := head.MarshalJSON()
	if err != nil {
		return LatestState{}, err
	}
	st := LatestState{Head: raw, Blocks: s.chain.Count()}
	if v, ok := s.chain.Verdict(); ok {
		st.CanonicalSpineValid, st.Verdict, st.Checkpoint = &v.CanonicalSpineValid, v.Verdict, v.Checkpoint
	}
	st.Fresh = fresh()
	return st, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
