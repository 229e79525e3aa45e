package ledger

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/proofsite/proofsite/ledger/tlog"
)

// BlockCheck is what can be said of one row on its own: does its hash
// recompute, do its signatures verify with the pinned keys, does it carry
// the witness quorum, does the payload the verifier holds (if any) match
// payload_hash, and is it stored where its index says. It keeps only the
// few fields the chain checks need, so a full walk of a large chain stays
// small in memory.
type BlockCheck struct {
	Index          int64 `json:"index"`
	Hash           Hash  `json:"hash"` // as the block claims it
	PrevHash       Hash  `json:"prev_hash"`
	WellFormed     bool  `json:"well_formed"`        // header fields in the form Seal writes
	HashValid      bool  `json:"hash_valid"`         // claimed hash == SHA-256(canonical header)
	SignatureValid bool  `json:"signature_valid"`    // writer and every listed witness verify
	WitnessCount   int   `json:"witness_count"`      // distinct pinned witnesses whose signatures verify
	QuorumMet      bool  `json:"witness_quorum_met"` // WitnessCount >= the quorum
	PayloadChecked bool  `json:"payload_checked"`    // the verifier held the payload and hashed it
	PayloadValid   bool  `json:"payload_valid"`      // not held, or its canonical SHA-256 is payload_hash
	StorageValid   bool  `json:"storage_valid"`      // not read from a store, or stored under its own index
	Time           int64 `json:"-"`                  // the timestamp in Unix nanoseconds (0 when malformed)
	Leaf           Hash  `json:"-"`                  // the row's Merkle leaf hash (tlog.LeafHash(Block.Leaf()))
	Err            error `json:"-"`                  // the problems found, nil when none (see errors.Is)
}

// Valid reports whether the row passed every check.
func (c BlockCheck) Valid() bool {
	return c.WellFormed && c.HashValid && c.SignatureValid && c.QuorumMet && c.PayloadValid && c.StorageValid
}

// CheckBlock checks a block on its own: CheckRow without a payload or a
// storage position.
func CheckBlock(b Block, keys KeySet, quorum int) BlockCheck {
	return CheckRow(Row{Block: b}, keys, quorum)
}

// CheckRow recomputes the row's hash, verifies its writer signature and
// every witness signature over the claimed hash with the keys pinned in
// keys, counts the distinct valid witnesses against quorum (zero means
// DefaultWitnessQuorum), and, when the row carries them, checks its
// payload against payload_hash and its storage position against its index.
// The writer must be pinned as a writer and each witness as a witness; a
// witness listed twice, or a signature by a key that is not pinned, makes
// SignatureValid false.
func CheckRow(r Row, keys KeySet, quorum int) BlockCheck {
	b := r.Block
	c := BlockCheck{Index: b.header.Index, Hash: b.hash, PrevHash: b.header.PrevHash, PayloadValid: true, StorageValid: true}
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
		c.Time = b.header.Time().UnixNano()
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
	if quorum <= 0 {
		quorum = DefaultWitnessQuorum
	}
	if c.QuorumMet = c.WitnessCount >= quorum; !c.QuorumMet {
		fail(ErrWitnessQuorum, Hash{}, Hash{}, fmt.Sprintf("%d valid pinned witness signature(s), the quorum is %d", c.WitnessCount, quorum))
	}
	if r.Private != nil && r.Private.Payload != nil {
		c.PayloadChecked = true
		h, _, err := PayloadHash(r.Private.Payload)
		switch {
		case err != nil:
			c.PayloadValid = false
			fail(ErrPayloadMismatch, b.header.PayloadHash, Hash{}, "the payload is not canonical JSON: "+err.Error())
		case h != b.header.PayloadHash:
			c.PayloadValid = false
			fail(ErrPayloadMismatch, b.header.PayloadHash, h, "the payload's canonical SHA-256 is not payload_hash")
		}
	}
	if r.Stored && r.StoredUnder != b.header.Index {
		c.StorageValid = false
		fail(ErrStorageMismatch, Hash{}, Hash{}, fmt.Sprintf("stored under index %d", r.StoredUnder))
	}
	c.Leaf = Hash(tlog.LeafHash(b.Leaf()))
	c.Err = errors.Join(errs...)
	return c
}

// BlockVerification is the verification of one block in its place in the
// chain (spec 2.4): the checks of CheckBlock plus whether it links to the
// block before it.
type BlockVerification struct {
	BlockCheck
	ChainLinkValid bool   `json:"chain_link_valid"`
	Warning        string `json:"warning,omitempty"` // the timestamp goes backwards
}

func backwardsWarning(b, prev Header) string {
	return fmt.Sprintf("block %d's timestamp %s is before block %d's %s (timestamps go backwards along the spine)", b.Index, b.Timestamp, prev.Index, prev.Timestamp)
}

// Valid reports whether every check passed.
func (v BlockVerification) Valid() bool { return v.BlockCheck.Valid() && v.ChainLinkValid }

// VerifyBlock checks b (CheckBlock with keys and quorum) and its link to
// prev, the block it must follow: b's prev_hash must be prev's hash and b's
// index must be prev's index + 1. With prev nil, b must be a genesis block
// (index 0, zero prev_hash). A timestamp before prev's is a Warning, not a
// failure.
func VerifyBlock(b Block, prev *Block, keys KeySet, quorum int) BlockVerification {
	v := BlockVerification{BlockCheck: CheckBlock(b, keys, quorum)}
	if prev != nil && v.WellFormed && b.header.Time().Before(prev.header.Time()) {
		v.Warning = backwardsWarning(b.header, prev.header)
	}
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

// CheckOptions tunes CheckRows.
type CheckOptions struct {
	// Workers is the number of goroutines hashing and verifying; zero means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Progress, when set, is called from the calling goroutine with the
	// number of blocks checked so far, at least once at the end.
	Progress func(checked int64)
}

// checkBatch is the unit of parallel work: enough blocks (each several
// signatures, about 150 µs) to amortise the channel hand-off, few enough
// that a short chain (a site's history of a few hundred rows) still keeps
// every core busy.
const checkBatch = 32

// CheckRows runs CheckRow over every row of seq on all cores and returns
// the checks in the order of seq. It stops at the first error seq yields
// and returns it.
func CheckRows(seq iter.Seq2[Row, error], keys KeySet, quorum int, opts CheckOptions) ([]BlockCheck, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type batch struct {
		rows   []Row
		checks []BlockCheck
	}
	work := make(chan *batch, 2*workers)
	var checked atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for bt := range work {
				bt.checks = make([]BlockCheck, len(bt.rows))
				for i, r := range bt.rows {
					bt.checks[i] = CheckRow(r, keys, quorum)
				}
				checked.Add(int64(len(bt.rows)))
				bt.rows = nil
			}
		})
	}
	var batches []*batch
	cur := &batch{rows: make([]Row, 0, checkBatch)}
	var readErr error
	for r, err := range seq {
		if err != nil {
			readErr = err
			break
		}
		cur.rows = append(cur.rows, r)
		if len(cur.rows) == checkBatch {
			batches = append(batches, cur)
			work <- cur
			cur = &batch{rows: make([]Row, 0, checkBatch)}
			if opts.Progress != nil {
				opts.Progress(checked.Load())
			}
		}
	}
	if len(cur.rows) > 0 {
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

// SpineOptions are the pins of VerifySpine.
type SpineOptions struct {
	// Genesis is the pinned genesis hash; zero accepts whatever genesis
	// the spine reaches (and says so in the verdict).
	Genesis Hash
}

// Spine is the result of VerifySpine.
type Spine struct {
	Valid         bool     `json:"valid"`
	Head          *Point   `json:"head"`
	Genesis       *Point   `json:"genesis"`
	GenesisPinned bool     `json:"genesis_pinned"`
	Length        int64    `json:"length"`         // blocks on the spine
	OffSpine      []int64  `json:"off_spine_rows"` // indexes of rows not on the spine
	Warnings      []string `json:"warnings"`       // timestamps that go backwards along the spine
	Err           error    `json:"-"`              // why the spine is invalid
}

// VerifySpine walks the canonical spine of rows: from the head (the row with
// the highest index) it follows prev_hash to the row with that hash, down to
// a genesis row (index 0, zero prev_hash) whose hash must be the pinned one.
// Every row on the way must be valid (CheckRow: signatures, quorum,
// payload, storage) and each link must go to a lower index; rows the walk
// does not visit are off the spine. A block whose timestamp is before the
// timestamp of the block it links to is a warning. rows is in table order;
// the walk does not depend on that order.
func VerifySpine(rows []BlockCheck, opts SpineOptions) Spine {
	s := Spine{GenesisPinned: !opts.Genesis.IsZero(), Warnings: []string{}}
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
	s.Err = func() error {
		for cur := head; ; {
			r := rows[cur]
			onSpine[cur] = true
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
			if p := rows[prev]; p.WellFormed && r.Time < p.Time {
				s.Warnings = append(s.Warnings, fmt.Sprintf("block %d's timestamp is before block %d's (timestamps go backwards along the spine)", r.Index, p.Index))
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
	slices.Reverse(s.Warnings) // genesis first
	return s
}

// Seam is a documented break in the strict table: the block whose prev_hash
// is not the previous row's hash, and why. It is pinned exactly: the row's
// index, its hash and its prev_hash. A verifier takes seams only from what
// it trusts (its content, the trust document, the auditor's flags), never
// from the data it verifies. A seam without both hashes documents nothing.
type Seam struct {
	Block    int64  `json:"block" yaml:"block"`
	Hash     Hash   `json:"hash,omitzero" yaml:"hash"`
	PrevHash Hash   `json:"prev_hash,omitzero" yaml:"prev_hash"`
	Reason   string `json:"reason" yaml:"reason"`
}

// Pinned reports whether s names both hashes of its row.
func (s Seam) Pinned() bool { return !s.Hash.IsZero() && !s.PrevHash.IsZero() }

// Documents reports whether s documents the break of the row with the
// given index, hash and prev_hash: s must be pinned and match all three.
func (s Seam) Documents(index int64, hash, prevHash Hash) bool {
	return s.Pinned() && s.Block == index && s.Hash == hash && s.PrevHash == prevHash
}

// PinSeams returns seams with each seam's hash and prev_hash taken from the
// block of blocks with its index. Use it only on blocks the caller sealed
// itself from a history it trusts (ledger init), never on blocks it is
// about to verify.
func PinSeams(seams []Seam, blocks []Block) ([]Seam, error) {
	out := slices.Clone(seams)
	for i, s := range out {
		if s.Block < 0 || s.Block >= int64(len(blocks)) || blocks[s.Block].Index() != s.Block {
			return nil, fmt.Errorf("%w: documented seam at block %d: no such block", ErrInvalidBlock, s.Block)
		}
		out[i].Hash, out[i].PrevHash = blocks[s.Block].Hash(), blocks[s.Block].PrevHash()
	}
	return out, nil
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
// failing row is one Break; a prev-hash mismatch is documented only when a
// pinned seam names that row's index, hash and prev_hash. A different row
// at a documented index, or a seam without hashes, documents nothing, and
// the break says why.
func VerifyStrictTable(rows []BlockCheck, seams []Seam) StrictTable {
	t := StrictTable{Rows: int64(len(rows)), Breaks: []Break{}}
	atBlock := make(map[int64][]Seam, len(seams))
	for _, s := range seams {
		atBlock[s.Block] = append(atBlock[s.Block], s)
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
			for _, s := range atBlock[r.Index] {
				switch {
				case s.Documents(r.Index, r.Hash, r.PrevHash):
					b.Documented, b.Reason = true, s.Reason
					used[r.Index] = true
				case !s.Pinned():
					b.Found += fmt.Sprintf(" (the seam at block %d gives no hash and prev_hash, so it documents nothing)", s.Block)
				default:
					b.Found += fmt.Sprintf(" and hash %s (the seam at block %d pins hash %s and prev_hash %s: a different row)", r.Hash, s.Block, s.Hash, s.PrevHash)
				}
				if b.Documented {
					break
				}
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
