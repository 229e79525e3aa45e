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
	// signature fails, or a link is missing.
	VerdictSpineBroken = "FAIL_CANONICAL_SPINE_BROKEN"
	// VerdictCheckpoint: the chain does not extend the pinned checkpoint
	// (truncated, rolled back or rewritten).
	VerdictCheckpoint = "FAIL_CHECKPOINT_NOT_EXTENDED"
	// VerdictInvalidRow: the spine is valid but a row of the table (off the
	// spine) fails its own hash or signatures.
	VerdictInvalidRow = "FAIL_STRICT_TABLE_INVALID_ROW"
	// VerdictUndocumentedBreak: the spine is valid but the strict table
	// breaks where no seam is documented.
	VerdictUndocumentedBreak = "FAIL_UNDOCUMENTED_STRICT_BREAK"
)

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

	Failures          []string    `json:"failures"`                 // every failure found, most serious first
	Head              *Point      `json:"head"`                     // the spine's head
	Genesis           *Point      `json:"genesis"`                  // the spine's genesis, when reached
	GenesisPinned     bool        `json:"genesis_pinned"`           // Genesis was checked against a pinned hash
	Checkpoint        *Checkpoint `json:"checkpoint"`               // keep this to detect truncation later
	CheckpointPinned  *Checkpoint `json:"checkpoint_pinned"`        // the checkpoint this run required, if any
	RowsChecked       int64       `json:"rows_checked"`             // rows whose hash and signatures were checked
	SpineLength       int64       `json:"spine_length"`             // blocks on the canonical spine
	OffSpineRows      []int64     `json:"off_spine_rows"`           // rows not on the spine
	DocumentedSeams   []Seam      `json:"documented_seams"`         // the seams given as input
	StrictTableBreaks []Break     `json:"strict_table_breaks"`      // every failing row
	LastFullWalkAt    *time.Time  `json:"last_full_walk_at"`        // set by the caller that ran the walk
	AppendedSinceWalk int64       `json:"appended_since_full_walk"` // blocks verified incrementally since
}

// Pass reports whether the verdict is a pass (with or without a documented
// seam).
func (v Verdict) Pass() bool {
	return v.Verdict == VerdictPass || v.Verdict == VerdictPassWithSeam
}

// NewVerdict combines the spine and the strict table into the verdict.
// It never passes when the spine is invalid, a checkpoint is not extended, or
// the table has an undocumented break.
func NewVerdict(spine Spine, table StrictTable, seams []Seam) Verdict {
	v := Verdict{
		CanonicalSpineValid:     spine.Valid,
		StrictTableValid:        table.Valid,
		StrictTableBreakAtBlock: table.BreakAt,
		Valid:                   table.Valid,
		ValidScope:              ValidScope,
		ValidDeprecated:         true,
		Failures:                []string{},
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
	if spine.Head != nil {
		v.Checkpoint = &Checkpoint{Size: spine.Head.Index + 1, HeadHash: spine.Head.Hash}
	}
	if spine.Checkpoint != nil {
		v.CheckpointPinned = &Checkpoint{Size: spine.Checkpoint.Index + 1, HeadHash: spine.Checkpoint.Hash}
	}

	var invalidRows, undocumented []Break
	for _, b := range table.Breaks {
		switch {
		case b.Kind == BreakInvalidRow:
			invalidRows = append(invalidRows, b)
		case !b.Documented:
			undocumented = append(undocumented, b)
		}
	}
	var verdicts []string
	add := func(verdict, msg string) {
		verdicts = append(verdicts, verdict)
		v.Failures = append(v.Failures, msg)
	}
	switch {
	case errors.Is(spine.Err, ErrEmptyChain):
		add(VerdictEmpty, "the chain has no blocks")
	case errors.Is(spine.Err, ErrGenesisMismatch):
		add(VerdictGenesisMismatch, "canonical spine: "+firstLine(spine.Err))
	case spine.Err != nil:
		add(VerdictSpineBroken, "canonical spine: "+firstLine(spine.Err))
	}
	if spine.CheckpointErr != nil {
		add(VerdictCheckpoint, "checkpoint: "+firstLine(spine.CheckpointErr))
	}
	for _, b := range invalidRows {
		add(VerdictInvalidRow, fmt.Sprintf("strict table: row %d is invalid: %s", b.Block, b.Found))
	}
	for _, b := range undocumented {
		add(VerdictUndocumentedBreak, fmt.Sprintf("strict table: undocumented break at block %d (%s): expected %s, found %s", b.Block, b.Kind, b.Expected, b.Found))
	}

	if len(verdicts) > 0 {
		v.Status, v.Verdict = StatusFail, verdicts[0]
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
// against v's head: check must come from VerifyBlock(next, &head, keys) and
// be valid, or Extend returns an error and v is unchanged. Appending a
// valid block at head+1 changes neither validity, so this is O(1).
func (v Verdict) Extend(check BlockVerification) (Verdict, error) {
	if !check.Valid() {
		return v, check.Err
	}
	if v.Head == nil || check.Index != v.Head.Index+1 || check.PrevHash != v.Head.Hash {
		return v, &BlockError{Index: check.Index, Err: ErrBrokenLink, Got: check.PrevHash, Note: "does not extend the verdict's head"}
	}
	v.Head = &Point{Index: check.Index, Hash: check.Hash}
	v.Checkpoint = &Checkpoint{Size: check.Index + 1, HeadHash: check.Hash}
	v.RowsChecked++
	v.SpineLength++
	v.AppendedSinceWalk++
	return v, nil
}

// Options are the inputs of Verify besides the blocks.
type Options struct {
	Keys       KeySet       // pinned writer and witness keys
	Genesis    Hash         // pinned genesis hash (zero: not pinned)
	Seams      []Seam       // documented seams
	Checkpoint *Checkpoint  // a checkpoint the chain must extend, if any
	Check      CheckOptions // parallelism and progress
}

// Result is everything a full walk found.
type Result struct {
	Verdict Verdict
	Spine   Spine
	Table   StrictTable
}

// Verify is the full walk: it checks every block on all cores, verifies the
// canonical spine and the strict table, and returns the verdict. blocks are
// in table order. An error means blocks could not be read; a chain that
// fails verification is a Result with a failing Verdict, not an error.
func Verify(blocks iter.Seq2[Block, error], opts Options) (Result, error) {
	rows, err := CheckBlocks(blocks, opts.Keys, opts.Check)
	if err != nil {
		return Result{}, err
	}
	spine := VerifySpine(rows, SpineOptions{Genesis: opts.Genesis, Checkpoint: opts.Checkpoint})
	table := VerifyStrictTable(rows, opts.Seams)
	return Result{Verdict: NewVerdict(spine, table, opts.Seams), Spine: spine, Table: table}, nil
}

// Values adapts a slice of blocks to the sequence Verify and CheckBlocks
// take.
func Values(blocks []Block) iter.Seq2[Block, error] {
	return func(yield func(Block, error) bool) {
		for _, b := range blocks {
			if !yield(b, nil) {
				return
			}
		}
	}
}
