package ledger

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// BlockCheck is what can be said of one block on its own: does its hash
// recompute, do its signatures verify with the pinned keys. It keeps only
// the few fields the chain checks need, so a full walk of a large chain
// stays small in memory.
type BlockCheck struct {
	Index          int64 `json:"index"`
	Hash           Hash  `json:"hash"` // as the block claims it
	PrevHash       Hash  `json:"prev_hash"`
	WellFormed     bool  `json:"well_formed"`     // header fields in the form Seal writes
	HashValid      bool  `json:"hash_valid"`      // claimed hash == SHA-256(canonical header)
	SignatureValid bool  `json:"signature_valid"` // writer and every listed witness verify
	WitnessCount   int   `json:"witness_count"`   // distinct witnesses whose signatures verify
	Err            error `json:"-"`               // the problems found, nil when none (see errors.Is)
}

// Valid reports whether the block is well formed, its hash recomputes and all
// its signatures verify.
func (c BlockCheck) Valid() bool { return c.WellFormed && c.HashValid && c.SignatureValid }

// CheckBlock recomputes b's hash and verifies its writer signature and every
// witness signature over the claimed hash with the keys pinned in keys. The
// writer must be pinned as a writer and each witness as a witness; a witness
// listed twice, or a signature by a key that is not pinned, makes
// SignatureValid false.
func CheckBlock(b Block, keys KeySet) BlockCheck {
	c := BlockCheck{Index: b.header.Index, Hash: b.hash, PrevHash: b.header.PrevHash}
	var errs []error
	fail := func(err error, want, got Hash, note string) {
		errs = append(errs, &BlockError{Index: c.Index, Err: err, Want: want, Got: got, Note: note})
	}
	failKey := func(note string, cause error) {
		errs = append(errs, &BlockError{Index: c.Index, Err: ErrBadSignature, Note: note, Cause: cause})
	}
	if err := b.header.Validate(); err != nil {
		fail(ErrInvalidBlock, Hash{}, Hash{}, err.Error())
	} else {
		c.WellFormed = true
	}
	if h := b.header.Hash(); h == b.hash {
		c.HashValid = true
	} else {
		fail(ErrHashMismatch, h, b.hash, "stored hash is not SHA-256 of the canonical header")
	}
	c.SignatureValid = true
	if k, err := keys.Lookup(b.header.Writer, RoleWriter); err != nil {
		c.SignatureValid = false
		failKey("writer", err)
	} else if !k.Verify(b.hash[:], b.signature) {
		c.SignatureValid = false
		fail(ErrBadSignature, Hash{}, Hash{}, "writer signature does not verify")
	}
	seen := make(map[KeyID]bool, len(b.witnesses))
	for _, w := range b.witnesses {
		k, err := keys.Lookup(w.KeyID, RoleWitness)
		switch {
		case seen[w.KeyID]:
			c.SignatureValid = false
			fail(ErrBadSignature, Hash{}, Hash{}, "witness "+string(w.KeyID)+" listed twice")
		case err != nil:
			c.SignatureValid = false
			failKey("witness", err)
		case !k.Verify(b.hash[:], w.Signature):
			c.SignatureValid = false
			fail(ErrBadSignature, Hash{}, Hash{}, "witness "+string(w.KeyID)+" signature does not verify")
		default:
			c.WitnessCount++
		}
		seen[w.KeyID] = true
	}
	c.Err = errors.Join(errs...)
	return c
}

// BlockVerification is the verification of one block in its place in the
// chain (spec 2.4): the checks of CheckBlock plus whether it links to the
// block before it.
type BlockVerification struct {
	BlockCheck
	ChainLinkValid bool `json:"chain_link_valid"`
}

// Valid reports whether every check passed.
func (v BlockVerification) Valid() bool { return v.BlockCheck.Valid() && v.ChainLinkValid }

// VerifyBlock checks b and its link to prev, the block it must follow: b's
// prev_hash must be prev's hash and b's index must be prev's index + 1. With
// prev nil, b must be a genesis block (index 0, zero prev_hash).
func VerifyBlock(b Block, prev *Block, keys KeySet) BlockVerification {
	v := BlockVerification{BlockCheck: CheckBlock(b, keys)}
	switch {
	case prev == nil:
		v.ChainLinkValid = b.header.Index == 0 && b.header.PrevHash.IsZero()
	default:
		v.ChainLinkValid = b.header.PrevHash == prev.hash && b.header.Index == prev.header.Index+1
	}
	if !v.ChainLinkValid {
		var want Hash
		if prev != nil {
			want = prev.hash
		}
		v.Err = errors.Join(v.Err, &BlockError{Index: b.header.Index, Err: ErrBrokenLink, Want: want, Got: b.header.PrevHash,
			Note: "block does not follow the head"})
	}
	return v
}

// CheckOptions tunes CheckBlocks.
type CheckOptions struct {
	// Workers is the number of goroutines hashing and verifying; zero means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Progress, when set, is called from the calling goroutine with the
	// number of blocks checked so far, at least once at the end.
	Progress func(checked int64)
}

// checkBatch is the unit of parallel work: enough blocks to amortise the
// channel hand-off against the cost of the signatures.
const checkBatch = 256

// CheckBlocks runs CheckBlock over every block of seq on all cores and
// returns the checks in the order of seq. It stops at the first error seq
// yields and returns it.
func CheckBlocks(seq iter.Seq2[Block, error], keys KeySet, opts CheckOptions) ([]BlockCheck, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type batch struct {
		blocks []Block
		checks []BlockCheck
	}
	work := make(chan *batch, 2*workers)
	var checked atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for bt := range work {
				bt.checks = make([]BlockCheck, len(bt.blocks))
				for i, b := range bt.blocks {
					bt.checks[i] = CheckBlock(b, keys)
				}
				checked.Add(int64(len(bt.blocks)))
				bt.blocks = nil
			}
		})
	}
	var batches []*batch
	cur := &batch{blocks: make([]Block, 0, checkBatch)}
	var readErr error
	for b, err := range seq {
		if err != nil {
			readErr = err
			break
		}
		cur.blocks = append(cur.blocks, b)
		if len(cur.blocks) == checkBatch {
			batches = append(batches, cur)
			work <- cur
			cur = &batch{blocks: make([]Block, 0, checkBatch)}
			if opts.Progress != nil {
				opts.Progress(checked.Load())
			}
		}
	}
	if len(cur.blocks) > 0 {
		batches = append(batches, cur)
		work <- cur
	}
	close(work)
	wg.Wait()
	if readErr != nil {
		return nil, readErr
	}
	out := make([]BlockCheck, 0, len(batches)*checkBatch)
	for _, bt := range batches {
		out = append(out, bt.checks...)
	}
	if opts.Progress != nil {
		opts.Progress(int64(len(out)))
	}
	return out, nil
}

// Point names one block: its index and hash.
type Point struct {
	Index int64 `json:"index"`
	Hash  Hash  `json:"hash"`
}

// Checkpoint is what an outsider keeps to catch truncation, rollback and
// rewrite: the size of the chain (head index + 1) and the head hash at some
// moment. The head block's writer signature covers that hash, and the hash
// covers the index, so the pair is signed by the chain itself. A later
// chain extends the checkpoint if its canonical spine passes through the
// block with index Size−1 and hash HeadHash. Its text form is "SIZE:HASH".
type Checkpoint struct {
	Size     int64 `json:"size"`
	HeadHash Hash  `json:"head_hash"`
}

// String returns the "SIZE:HASH" form.
func (c Checkpoint) String() string { return fmt.Sprintf("%d:%s", c.Size, c.HeadHash) }

// ParseCheckpoint parses the "SIZE:HASH" form.
func ParseCheckpoint(s string) (Checkpoint, error) {
	size, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || n < 1 {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint %q is not SIZE:HASH", ErrCheckpoint, s)
	}
	h, err := ParseHash(hash)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint %q: %w", ErrCheckpoint, s, err)
	}
	return Checkpoint{Size: n, HeadHash: h}, nil
}

// SpineOptions are the pins of VerifySpine.
type SpineOptions struct {
	// Genesis is the pinned genesis hash; zero accepts whatever genesis
	// the spine reaches (and says so in the verdict).
	Genesis Hash
	// Checkpoint, when set, must be extended by the spine.
	Checkpoint *Checkpoint
}

// Spine is the result of VerifySpine.
type Spine struct {
	Valid          bool    `json:"valid"`
	Head           *Point  `json:"head"`
	Genesis        *Point  `json:"genesis"`
	GenesisPinned  bool    `json:"genesis_pinned"`
	Length         int64   `json:"length"`                    // blocks on the spine
	OffSpine       []int64 `json:"off_spine_rows"`            // indexes of rows not on the spine
	Err            error   `json:"-"`                         // why the spine is invalid
	CheckpointErr  error   `json:"-"`                         // why the checkpoint is not extended
	CheckpointUsed bool    `json:"checkpoint_pinned"`         // a checkpoint was given
	Checkpoint     *Point  `json:"checkpoint_head,omitempty"` // the checkpoint's head, when given
}

// VerifySpine walks the canonical spine of rows: from the head (the row with
// the highest index) it follows prev_hash to the row with that hash, down to
// a genesis row (index 0, zero prev_hash) whose hash must be the pinned one.
// Every row on the way must be valid (CheckBlock) and each link must go to a
// lower index; rows the walk does not visit are off the spine. rows is in
// table order; the walk does not depend on that order.
func VerifySpine(rows []BlockCheck, opts SpineOptions) Spine {
	s := Spine{GenesisPinned: !opts.Genesis.IsZero(), CheckpointUsed: opts.Checkpoint != nil}
	if len(rows) == 0 {
		s.Err = ErrEmptyChain
		return s
	}
	byHash := make(map[Hash]int, len(rows))
	head := 0
	for i, r := range rows {
		if _, dup := byHash[r.Hash]; !dup {
			byHash[r.Hash] = i
		}
		if r.Index > rows[head].Index {
			head = i
		}
	}
	s.Head = &Point{Index: rows[head].Index, Hash: rows[head].Hash}
	onSpine := make([]bool, len(rows))
	spineAt := make(map[int64]Hash) // index -> hash, for the checkpoint
	s.Err = func() error {
		for cur := head; ; {
			r := rows[cur]
			onSpine[cur] = true
			spineAt[r.Index] = r.Hash
			s.Length++
			if !r.Valid() {
				return r.Err
			}
			if r.Index == 0 || r.PrevHash.IsZero() {
				if r.Index != 0 || !r.PrevHash.IsZero() {
					return &BlockError{Index: r.Index, Err: ErrBrokenLink, Got: r.PrevHash,
						Note: "only the genesis block (index 0) may have a zero prev_hash"}
				}
				s.Genesis = &Point{Index: 0, Hash: r.Hash}
				if s.GenesisPinned && r.Hash != opts.Genesis {
					return &BlockError{Index: 0, Err: ErrGenesisMismatch, Want: opts.Genesis, Got: r.Hash}
				}
				return nil
			}
			prev, ok := byHash[r.PrevHash]
			if !ok {
				return &BlockError{Index: r.Index, Err: ErrBrokenLink, Got: r.PrevHash,
					Note: "no row has the hash this block links to"}
			}
			if rows[prev].Index >= r.Index {
				return &BlockError{Index: r.Index, Err: ErrBrokenLink, Want: rows[prev].Hash, Got: r.PrevHash,
					Note: fmt.Sprintf("links forward to block %d", rows[prev].Index)}
			}
			cur = prev
		}
	}()
	s.Valid = s.Err == nil
	for i, r := range rows {
		if !onSpine[i] {
			s.OffSpine = append(s.OffSpine, r.Index)
		}
	}
	if cp := opts.Checkpoint; cp != nil {
		s.Checkpoint = &Point{Index: cp.Size - 1, Hash: cp.HeadHash}
		got, ok := spineAt[cp.Size-1]
		switch {
		case s.Head.Index < cp.Size-1:
			s.CheckpointErr = &BlockError{Index: cp.Size - 1, Err: ErrCheckpoint, Want: cp.HeadHash,
				Note: fmt.Sprintf("chain has %d blocks, the checkpoint %d: truncated or rolled back", s.Head.Index+1, cp.Size)}
		case !ok || got != cp.HeadHash:
			s.CheckpointErr = &BlockError{Index: cp.Size - 1, Err: ErrCheckpoint, Want: cp.HeadHash, Got: got,
				Note: "the spine does not pass through the checkpoint head: history rewritten or forked"}
		}
	}
	return s
}

// Seam is a documented break in the strict table: the block whose prev_hash
// is not the previous row's hash, and why. Seams are published in
// content/site.yaml (ledger.documented_seams).
type Seam struct {
	Block  int64  `json:"block" yaml:"block"`
	Reason string `json:"reason" yaml:"reason"`
}

// BreakKind says how a row fails the strict table.
type BreakKind string

// The ways a row can break the strict table. Only a prev-hash mismatch can be
// documented: a seam explains a link, never a missing, repeated or invalid
// row.
const (
	BreakPrevHash   BreakKind = "prev_hash_mismatch" // prev_hash is not the previous row's hash
	BreakSequence   BreakKind = "index_sequence"     // index is not the previous row's index + 1 (gap, duplicate, reorder)
	BreakInvalidRow BreakKind = "invalid_row"        // hash does not recompute or a signature fails
)

// Break is one row that fails the strict table.
type Break struct {
	Block      int64     `json:"block"`    // the row's index
	Position   int       `json:"position"` // the row's 0-based position in the table
	Kind       BreakKind `json:"kind"`
	Expected   string    `json:"expected"` // what the strict rule wanted
	Found      string    `json:"found"`    // what the row has
	Documented bool      `json:"documented"`
	Reason     string    `json:"reason,omitempty"` // the seam's reason, when documented
}

// StrictTable is the result of VerifyStrictTable.
type StrictTable struct {
	Valid        bool    `json:"valid"`
	BreakAt      *int64  `json:"break_at_block"` // first failing row, documented or not
	Breaks       []Break `json:"breaks"`
	Rows         int64   `json:"rows"`
	Undocumented int     `json:"undocumented_breaks"`
	UnusedSeams  []Seam  `json:"unused_seams,omitempty"` // documented seams with no matching break
}

// VerifyStrictTable checks rows in table order (index order for the store,
// line order for an export): row 0 is the genesis (index 0, zero
// prev_hash), and each later row has the previous row's index + 1 and the
// previous row's hash as prev_hash, and every row is valid on its own. Each
// failing row is one Break; a prev-hash mismatch at a block listed in seams
// is documented.
func VerifyStrictTable(rows []BlockCheck, seams []Seam) StrictTable {
	t := StrictTable{Rows: int64(len(rows)), Breaks: []Break{}}
	documented := make(map[int64]string, len(seams))
	for _, s := range seams {
		documented[s.Block] = s.Reason
	}
	used := make(map[int64]bool)
	for i, r := range rows {
		var wantIndex int64
		var wantPrev Hash
		if i > 0 {
			wantIndex, wantPrev = rows[i-1].Index+1, rows[i-1].Hash
		}
		b := Break{Block: r.Index, Position: i}
		switch {
		case !r.Valid():
			b.Kind, b.Expected, b.Found = BreakInvalidRow, "a well-formed row whose hash recomputes and whose signatures verify", firstLine(r.Err)
		case r.Index != wantIndex:
			b.Kind, b.Expected, b.Found = BreakSequence, "index "+strconv.FormatInt(wantIndex, 10), "index "+strconv.FormatInt(r.Index, 10)
		case r.PrevHash != wantPrev:
			b.Kind, b.Expected, b.Found = BreakPrevHash, "prev_hash "+wantPrev.String(), "prev_hash "+r.PrevHash.String()
			if reason, ok := documented[r.Index]; ok {
				b.Documented, b.Reason = true, reason
				used[r.Index] = true
			}
		default:
			continue
		}
		t.Breaks = append(t.Breaks, b)
		if !b.Documented {
			t.Undocumented++
		}
	}
	t.Valid = len(t.Breaks) == 0
	if !t.Valid {
		at := t.Breaks[0].Block
		t.BreakAt = &at
	}
	for _, s := range seams {
		if !used[s.Block] {
			t.UnusedSeams = append(t.UnusedSeams, s)
		}
	}
	return t
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
