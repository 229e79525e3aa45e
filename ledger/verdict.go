package ledger

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// The verdicts. Only the two PASS verdicts are passes; every other verdict
// names what failed, most serious first.
const (
	// VerdictPass: the canonical spine is valid and the strict table has no
	// break.
	VerdictPass = "PASS"
	// VerdictPassWithSeam: the canonical spine is valid and every strict
	// table break is a documented seam.
	VerdictPassWithSeam = "PASS_WITH_DOCUMENTED_STRICT_SEAM"
	// VerdictEmpty: there is no block at all.
	VerdictEmpty = "FAIL_EMPTY_CHAIN"
	// VerdictGenesisMismatch: the spine ends at a genesis other than the
	// pinned one.
	VerdictGenesisMismatch = "FAIL_GENESIS_MISMATCH"
	// VerdictSpineBroken: a spine block's hash does not recompute, a
	// signature fails, it lacks the witness quorum, its payload does not
	// match, it is stored under another index, or a link is missing.
	VerdictSpineBroken = "FAIL_CANONICAL_SPINE_BROKEN"
	// VerdictStorage: the store's bookkeeping disagrees with its rows: the
	// stored row count is not the number of rows, or the stored Merkle
	// tree's root is not the root of the rows (a row edited, removed or
	// added behind the store's back). A row stored under another index
	// than its own is an invalid row.
	VerdictStorage = "FAIL_STORAGE_MISMATCH"
	// VerdictCheckpoint: the rows do not extend the checkpoint the verifier
	// remembered: the Merkle root over its first size rows differs (a row
	// replaced anywhere, history rewritten) or the table is shorter
	// (truncated, rolled back).
	VerdictCheckpoint = "FAIL_CHECKPOINT_NOT_EXTENDED"
	// VerdictCheckpointInvalid: the checkpoint the source presents (the
	// export header's, the host's) does not verify with the pinned
	// checkpoint key, names another log, or does not match the rows.
	VerdictCheckpointInvalid = "FAIL_CHECKPOINT_INVALID"
	// VerdictInvalidRow: the spine is valid but a row of the table (off the
	// spine) fails its own checks: hash, signatures, witness quorum, payload
	// or storage position.
	VerdictInvalidRow = "FAIL_STRICT_TABLE_INVALID_ROW"
	// VerdictUndocumentedBreak: the spine is valid but the strict table
	// breaks where no seam is documented.
	VerdictUndocumentedBreak = "FAIL_UNDOCUMENTED_STRICT_BREAK"
)

// verdictRank lists the failing verdicts, most serious first; a verdict
// names the first failure in this order.
// The store's bookkeeping comes last: the rows' own failures say more.
var verdictRank = []string{VerdictEmpty, VerdictGenesisMismatch, VerdictSpineBroken,
	VerdictCheckpoint, VerdictCheckpointInvalid, VerdictInvalidRow, VerdictUndocumentedBreak, VerdictStorage}

// VerdictNames returns every verdict name: the two passes, then the
// failures, most serious first.
func VerdictNames() []string {
	return append([]string{VerdictPass, VerdictPassWithSeam}, verdictRank...)
}

// Status values of a Verdict.
const (
	StatusOK   = "ok"
	StatusFail = "fail"
)

// ValidScope is the value of Verdict.ValidScope: the deprecated "valid"
// field speaks for the strict table only.
const ValidScope = "strict_table"

// Verdict is the ledger verdict of spec 2.1 (GET /api/ledger/verify) with
// extras. canonical_spine_valid is the authoritative integrity field;
// "valid" is kept for old clients, deprecated and scoped to the strict table.
type Verdict struct {
	Status                  string  `json:"status"`
	Verdict                 string  `json:"verdict"`
	CanonicalSpineValid     bool    `json:"canonical_spine_valid"`
	StrictTableValid        bool    `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64  `json:"strict_table_break_at_block"`
	Warning                 *string `json:"warning"`
	Valid                   bool    `json:"valid"`
	ValidScope              string  `json:"valid_scope"`
	ValidDeprecated         bool    `json:"valid_deprecated"`

	Failures            []string    `json:"failures"`                 // every failure found, most serious first
	Warnings            []string    `json:"warnings"`                 // policy notes that are not failures (timestamps going backwards)
	Head                *Point      `json:"head"`                     // the spine's head
	Genesis             *Point      `json:"genesis"`                  // the spine's genesis, when reached
	GenesisPinned       bool        `json:"genesis_pinned"`           // Genesis was checked against a pinned hash
	WitnessQuorum       int         `json:"witness_quorum"`           // distinct pinned witness signatures every block needed
	Checkpoint          *Checkpoint `json:"checkpoint"`               // the Merkle root over every row: keep it to detect rewrites later
	CheckpointPinned    *Checkpoint `json:"checkpoint_pinned"`        // the remembered checkpoint this run required, if any
	CheckpointPresented *Checkpoint `json:"checkpoint_presented"`     // the signed checkpoint the source presented, if any
	PayloadsChecked     int64       `json:"payloads_checked"`         // rows whose payload was held and hashed
	RowsChecked         int64       `json:"rows_checked"`             // rows whose hash and signatures were checked
	SpineLength         int64       `json:"spine_length"`             // blocks on the canonical spine
	OffSpineRows        []int64     `json:"off_spine_rows"`           // rows not on the spine
	DocumentedSeams     []Seam      `json:"documented_seams"`         // the seams given as input
	StrictTableBreaks   []Break     `json:"strict_table_breaks"`      // every failing row
	LastFullWalkAt      *time.Time  `json:"last_full_walk_at"`        // set by the caller that ran the walk
	AppendedSinceWalk   int64       `json:"appended_since_full_walk"` // blocks verified incrementally since
}

// Pass reports whether the verdict is a pass (with or without a documented
// seam).
func (v Verdict) Pass() bool {
	return v.Verdict == VerdictPass || v.Verdict == VerdictPassWithSeam
}

// Failure is one failure found beside the spine and the strict table (a
// checkpoint, the store's bookkeeping): the verdict it gives and what to
// tell a reader.
type Failure struct {
	Verdict string
	Message string
}

// NewVerdict combines the spine, the strict table and any other failures
// into the verdict. It never passes when the spine is invalid, the table
// has an undocumented break or an invalid row, or anything else failed.
func NewVerdict(spine Spine, table StrictTable, seams []Seam, other ...Failure) Verdict {
	v := Verdict{
		CanonicalSpineValid:     spine.Valid,
		StrictTableValid:        table.Valid,
		StrictTableBreakAtBlock: table.BreakAt,
		Valid:                   table.Valid,
		ValidScope:              ValidScope,
		ValidDeprecated:         true,
		Failures:                []string{},
		Warnings:                slices.Clone(spine.Warnings),
		Head:                    spine.Head,
		Genesis:                 spine.Genesis,
		GenesisPinned:           spine.GenesisPinned,
		RowsChecked:             table.Rows,
		SpineLength:             spine.Length,
		OffSpineRows:            slices.Clone(spine.OffSpine),
		DocumentedSeams:         slices.Clone(seams),
		StrictTableBreaks:       slices.Clone(table.Breaks),
	}
	if v.OffSpineRows == nil {
		v.OffSpineRows = []int64{}
	}
	if v.DocumentedSeams == nil {
		v.DocumentedSeams = []Seam{}
	}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}

	var failures []Failure
	switch {
	case errors.Is(spine.Err, ErrEmptyChain):
		failures = append(failures, Failure{VerdictEmpty, "the chain has no blocks"})
	case errors.Is(spine.Err, ErrGenesisMismatch):
		failures = append(failures, Failure{VerdictGenesisMismatch, "canonical spine: " + firstLine(spine.Err)})
	case spine.Err != nil:
		failures = append(failures, Failure{VerdictSpineBroken, "canonical spine: " + firstLine(spine.Err)})
	}
	failures = append(failures, other...)
	for _, b := range table.Breaks {
		switch {
		case b.Kind == BreakInvalidRow:
			failures = append(failures, Failure{VerdictInvalidRow, fmt.Sprintf("strict table: row %d is invalid: %s", b.Block, b.Found)})
		case !b.Documented:
			failures = append(failures, Failure{VerdictUndocumentedBreak, fmt.Sprintf("strict table: undocumented break at block %d (%s): expected %s, found %s", b.Block, b.Kind, b.Expected, b.Found)})
		}
	}
	// Most serious first; the order found is kept within a verdict.
	slices.SortStableFunc(failures, func(a, b Failure) int {
		return slices.Index(verdictRank, a.Verdict) - slices.Index(verdictRank, b.Verdict)
	})
	for _, f := range failures {
		v.Failures = append(v.Failures, f.Message)
	}

	if len(failures) > 0 {
		v.Status, v.Verdict = StatusFail, failures[0].Verdict
		w := "FAIL: " + v.Failures[0]
		if n := len(v.Failures) - 1; n > 0 {
			w += fmt.Sprintf(" (and %d more failure(s))", n)
		}
		v.Warning = &w
		return v
	}
	v.Status = StatusOK
	if table.Valid {
		v.Verdict = VerdictPass
		return v
	}
	v.Verdict = VerdictPassWithSeam
	var parts []string
	for _, b := range table.Breaks {
		parts = append(parts, fmt.Sprintf("block %d: %s", b.Block, strings.TrimRight(strings.TrimSpace(b.Reason), ".")))
	}
	w := fmt.Sprintf("The canonical spine is valid. The strict all-row table breaks at documented seam(s): %s. Use canonical_spine_valid as the integrity field; \"valid\" is deprecated and scoped to the strict table.",
		strings.Join(parts, "; "))
	v.Warning = &w
	return v
}

// Extend returns the verdict after appending a block that was verified
// against v's head: check must come from VerifyBlock(next, &head, keys,
// quorum) and be valid, or Extend returns an error and v is unchanged. cp
// is the checkpoint of the table with the block appended (the caller keeps
// the Merkle tree). Appending a valid block at head+1 changes neither
// validity, so this is O(1).
func (v Verdict) Extend(check BlockVerification, cp Checkpoint) (Verdict, error) {
	if !check.Valid() {
		return v, check.Err
	}
	if v.Head == nil || check.Index != v.Head.Index+1 || check.PrevHash != v.Head.Hash {
		return v, &BlockError{Index: check.Index, Err: ErrBrokenLink, Got: check.PrevHash, Note: "does not extend the verdict's head"}
	}
	v.Head = &Point{Index: check.Index, Hash: check.Hash}
	v.Checkpoint = &cp
	if check.Warning != "" {
		v.Warnings = append(slices.Clone(v.Warnings), check.Warning)
	}
	v.RowsChecked++
	v.SpineLength++
	v.AppendedSinceWalk++
	return v, nil
}

// Options are the inputs of Verify besides the rows. Keys, Genesis,
// Seams, WitnessQuorum and Log are pins: take them from a source you trust
// (TrustDocument.Options), never from the data being verified.
type Options struct {
	Keys    KeySet // pinned writer and witness keys
	Genesis Hash   // pinned genesis hash (zero: not pinned)
	Seams   []Seam // documented seams, pinned by hash and prev_hash
	// WitnessQuorum is the number of distinct pinned witness signatures
	// every block needs; zero means DefaultWitnessQuorum.
	WitnessQuorum int
	// Log names the log: its origin labels the computed checkpoint and its
	// checkpoint key verifies PresentedCheckpoint.
	Log LogPin
	// Checkpoint is a checkpoint the verifier remembers: the Merkle root
	// over the first Size rows must be its Root.
	Checkpoint *Checkpoint
	// PresentedCheckpoint is the signed checkpoint note the source carries
	// (an export header's, a host's). It is information: its signature must
	// verify with Log.CheckpointKey and its root must match the rows; with
	// no key pinned it is only compared with the rows.
	PresentedCheckpoint []byte
	// Stored, when set, is what the store records about its rows; it must
	// agree with the rows walked.
	Stored *Stored
	Check  CheckOptions // parallelism and progress
}

// Stored is a store's bookkeeping: the row count it records and the
// Merkle tree it keeps (how many rows it covers, and its root).
type Stored struct {
	Count    int64
	TreeSize int64
	Root     Hash
}

// Result is everything a full walk found.
type Result struct {
	Verdict Verdict
	Spine   Spine
	Table   StrictTable
}

// Verify is the full walk over blocks: VerifyRows without payloads.
func Verify(blocks iter.Seq2[Block, error], opts Options) (Result, error) {
	return VerifyRows(func(yield func(Row, error) bool) {
		for b, err := range blocks {
			if !yield(Row{Block: b}, err) {
				return
			}
		}
	}, opts)
}

// VerifyRows is the full walk: it checks every row on all cores
// (CheckRow), verifies the canonical spine and the strict table, computes
// the Merkle checkpoint over all rows and checks it against the remembered
// and the presented checkpoints, and returns the verdict. rows are in table
// order. An error means rows could not be read; a chain that fails
// verification is a Result with a failing Verdict, not an error.
func VerifyRows(rows iter.Seq2[Row, error], opts Options) (Result, error) {
	quorum := opts.WitnessQuorum
	if quorum <= 0 {
		quorum = DefaultWitnessQuorum
	}
	checks, err := CheckRows(rows, opts.Keys, quorum, opts.Check)
	if err != nil {
		return Result{}, err
	}
	return verifyChecks(checks, opts), nil
}

// VerifyBlocks is Verify over blocks held in memory that also returns each
// row's check, in table order, for a caller that shows the rows (the
// build's explorer) without checking their signatures again.
func VerifyBlocks(blocks []Block, opts Options) (Result, []BlockCheck, error) {
	rows := func(yield func(Row, error) bool) {
		for _, b := range blocks {
			if !yield(Row{Block: b}, nil) {
				return
			}
		}
	}
	checks, err := CheckRows(rows, opts.Keys, opts.WitnessQuorum, opts.Check)
	if err != nil {
		return Result{}, nil, err
	}
	return verifyChecks(checks, opts), checks, nil
}

// verifyChecks is VerifyRows after CheckRows.
func verifyChecks(checks []BlockCheck, opts Options) Result {
	quorum := opts.WitnessQuorum
	if quorum <= 0 {
		quorum = DefaultWitnessQuorum
	}
	spine := VerifySpine(checks, SpineOptions{Genesis: opts.Genesis})
	table := VerifyStrictTable(checks, opts.Seams)

	var failures []Failure
	fail := func(verdict, format string, args ...any) {
		failures = append(failures, Failure{verdict, fmt.Sprintf(format, args...)})
	}
	var presented *Checkpoint
	if opts.PresentedCheckpoint != nil {
		p, err := presentedCheckpoint(opts.PresentedCheckpoint, opts.Log)
		if err != nil {
			fail(VerdictCheckpointInvalid, "presented checkpoint: %s", firstLine(err))
		} else {
			presented = &p
		}
	}
	sizes := []int64{-1, -1}
	if opts.Checkpoint != nil {
		sizes[0] = opts.Checkpoint.Size
	}
	if presented != nil {
		sizes[1] = presented.Size
	}
	root, prefix := rootsOf(checks, sizes...)
	n := int64(len(checks))
	origin := opts.Log.Origin
	if cp := opts.Checkpoint; cp != nil {
		switch got, ok := prefix[cp.Size]; {
		case cp.Origin != "" && origin != "" && cp.Origin != origin:
			fail(VerdictCheckpoint, "checkpoint: the remembered checkpoint is of log %q, these rows are of %q", cp.Origin, origin)
		case !ok:
			fail(VerdictCheckpoint, "checkpoint: the table has %d rows, the remembered checkpoint %d: truncated or rolled back", n, cp.Size)
		case got != cp.Root:
			fail(VerdictCheckpoint, "checkpoint: the Merkle root over the first %d rows is %s, the remembered checkpoint's %s: a row was replaced, removed or reordered, or history rewritten", cp.Size, got, cp.Root)
		}
	}
	if p := presented; p != nil {
		switch got, ok := prefix[p.Size]; {
		case origin != "" && p.Origin != origin:
			fail(VerdictCheckpointInvalid, "presented checkpoint: it is of log %q, the pinned log is %q", p.Origin, origin)
		case !ok:
			fail(VerdictCheckpointInvalid, "presented checkpoint: it covers %d rows, the table has %d", p.Size, n)
		case got != p.Root:
			fail(VerdictCheckpointInvalid, "presented checkpoint: its root %s is not the Merkle root %s of the first %d rows", p.Root, got, p.Size)
		}
		if origin == "" {
			origin = p.Origin
		}
	}
	if st := opts.Stored; st != nil {
		switch {
		case st.Count != n:
			fail(VerdictStorage, "storage: the store records %d rows but holds %d", st.Count, n)
		case st.TreeSize != n:
			fail(VerdictStorage, "storage: the stored Merkle tree covers %d rows, the store holds %d", st.TreeSize, n)
		case st.Root != root:
			fail(VerdictStorage, "storage: the stored Merkle tree's root %s is not the root %s recomputed from the %d rows", st.Root, root, n)
		}
	}
	v := NewVerdict(spine, table, opts.Seams, failures...)
	v.WitnessQuorum = quorum
	if n > 0 {
		v.Checkpoint = &Checkpoint{Origin: origin, Size: n, Root: root}
	}
	v.CheckpointPinned, v.CheckpointPresented = opts.Checkpoint, presented
	for _, c := range checks {
		if c.PayloadChecked {
			v.PayloadsChecked++
		}
	}
	return Result{Verdict: v, Spine: spine, Table: table}
}

// presentedCheckpoint reads a checkpoint the source presents: verified
// with the pinned key when there is one, else only parsed (and compared
// with the rows, which is all it can say).
func presentedCheckpoint(note []byte, log LogPin) (Checkpoint, error) {
	if log.CheckpointKey != "" {
		return OpenCheckpoint(note, log.CheckpointKey)
	}
	return ParseCheckpoint(string(note))
}

// Values adapts a slice of blocks to the sequence Verify takes.
func Values(blocks []Block) iter.Seq2[Block, error] {
	return func(yield func(Block, error) bool) {
		for _, b := range blocks {
			if !yield(b, nil) {
				return
			}
		}
	}
}
