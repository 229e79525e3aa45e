package ledger

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers branch on them with errors.Is; the messages are
// for people and may change.
var (
	// ErrInvalidJSON reports input that is not well-formed JSON (RFC 8259),
	// including number forms JSON does not allow (leading zeros, "+1", ".5",
	// NaN, hexadecimal) and trailing data after the value.
	ErrInvalidJSON = errors.New("ledger: invalid JSON")
	// ErrInvalidUTF8 reports JSON text that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("ledger: invalid UTF-8")
	// ErrLoneSurrogate reports a \u escape naming half of a UTF-16 surrogate
	// pair without its other half.
	ErrLoneSurrogate = errors.New("ledger: lone UTF-16 surrogate")
	// ErrDuplicateKey reports an object that names the same member twice.
	ErrDuplicateKey = errors.New("ledger: duplicate object key")
	// ErrIntegerRange reports an integer literal beyond ±(2^53−1), which
	// RFC 8785 implementations cannot represent exactly.
	ErrIntegerRange = errors.New("ledger: integer out of the exact range ±(2^53-1)")

	// ErrInvalidKey reports a public or private key of the wrong length or
	// encoding.
	ErrInvalidKey = errors.New("ledger: invalid key")
	// ErrSmallOrderKey reports an ed25519 public key of small order, under
	// which signatures can be forged.
	ErrSmallOrderKey = errors.New("ledger: small-order ed25519 public key")
	// ErrKeyIDMismatch reports a published key whose id is not the id derived
	// from its public key.
	ErrKeyIDMismatch = errors.New("ledger: key id does not match public key")
	// ErrUnknownKey reports a signature by a key that is not pinned.
	ErrUnknownKey = errors.New("ledger: unknown key")
	// ErrKeyRole reports a pinned key used in a role it was not published
	// for (a witness key as writer, for example).
	ErrKeyRole = errors.New("ledger: key used outside its role")
	// ErrSeamNotPinned reports a documented seam that a trust document does
	// not pin yet: its hashes must come from a trusted source (the history
	// the chain was sealed from), never from the rows being verified.
	ErrSeamNotPinned = errors.New("ledger: documented seam not pinned")

	// ErrInvalidBlock reports a block that cannot be built or decoded: a
	// missing field, a malformed hash or timestamp, an unknown member.
	ErrInvalidBlock = errors.New("ledger: invalid block")
	// ErrHashMismatch reports a block whose stored hash is not the SHA-256 of
	// its canonical header.
	ErrHashMismatch = errors.New("ledger: hash mismatch")
	// ErrBadSignature reports a writer or witness signature that does not
	// verify.
	ErrBadSignature = errors.New("ledger: bad signature")
	// ErrBrokenLink reports a block whose prev_hash does not name the block
	// it must follow.
	ErrBrokenLink = errors.New("ledger: broken chain link")
	// ErrGenesisMismatch reports a chain whose genesis is not the pinned
	// genesis.
	ErrGenesisMismatch = errors.New("ledger: genesis mismatch")
	// ErrCheckpoint reports rows that do not extend a checkpoint the
	// verifier remembered (a replaced row, truncation, rollback or rewrite).
	ErrCheckpoint = errors.New("ledger: checkpoint not extended")
	// ErrBadCheckpoint reports a checkpoint that cannot be parsed, or a
	// signed one whose signature does not verify with the pinned key.
	ErrBadCheckpoint = errors.New("ledger: invalid checkpoint")
	// ErrPayloadMismatch reports a payload whose canonical SHA-256 is not
	// the block's payload_hash.
	ErrPayloadMismatch = errors.New("ledger: payload does not match payload_hash")
	// ErrWitnessQuorum reports a block with fewer distinct valid pinned
	// witness signatures than the quorum.
	ErrWitnessQuorum = errors.New("ledger: witness quorum not met")
	// ErrStorageMismatch reports a row stored under another index than its
	// own, or a stored row count that is not the number of rows.
	ErrStorageMismatch = errors.New("ledger: storage does not match the rows")
	// ErrEmptyChain reports a chain with no blocks.
	ErrEmptyChain = errors.New("ledger: empty chain")

	// ErrInvalidExport reports a JSONL export or history file that cannot be
	// read: a bad header, a malformed line, an unsupported format.
	ErrInvalidExport = errors.New("ledger: invalid export")
)

// BlockError is a failure tied to one block. Want and Got hold the two hashes
// that disagree, when the failure is a mismatch (the stored and recomputed
// hash, or the expected and actual prev_hash); they are zero otherwise.
type BlockError struct {
	Index int64  // index of the block at fault
	Err   error  // one of the sentinels above
	Want  Hash   // the hash that was expected
	Got   Hash   // the hash that was found
	Note  string // optional detail
	Cause error  // optional underlying error (ErrUnknownKey, for example)
}

// Error names the block, the failure and both hashes.
func (e *BlockError) Error() string {
	msg := fmt.Sprintf("%v at block %d", e.Err, e.Index)
	if !e.Want.IsZero() || !e.Got.IsZero() {
		msg += fmt.Sprintf(" (want %s, got %s)", e.Want, e.Got)
	}
	if e.Note != "" {
		msg += ": " + e.Note
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the sentinel and the cause, if any.
func (e *BlockError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// LineError is a failure reading one line of a JSONL file.
type LineError struct {
	Line int   // 1-based line number
	Err  error // the cause
}

// Error names the line and the cause.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }
