package memory

import (
	"errors"
	"fmt"
)

// Errors of the package. Callers branch on them with errors.Is and
// errors.As; the messages are for people and may change.
var (
	// ErrInvalid reports a draft that cannot be stored: a malformed node
	// id, content that is not one acceptable JSON value, or too large.
	ErrInvalid = errors.New("memory: invalid memory")
	// ErrUnknownNode reports a node id that is well formed but not in the
	// configured roster.
	ErrUnknownNode = errors.New("memory: unknown node")
	// ErrNotFound reports a memory id that is not stored.
	ErrNotFound = errors.New("memory: not found")
	// ErrWriteFailed reports a store that was not written; the error is a
	// *WriteError naming which write failed.
	ErrWriteFailed = errors.New("memory: write failed")
	// ErrConflict reports an id that the SQL store holds with a different
	// record than the primary: it is never overwritten by a write, only by
	// the reconciler's repair from the primary.
	ErrConflict = errors.New("memory: conflicting record for the same id")
	// ErrWitness reports a memory whose chain block does not witness it.
	ErrWitness = errors.New("memory: chain witness does not match")
	// ErrCorrupt reports stored data that does not decode or whose derived
	// fields do not agree.
	ErrCorrupt = errors.New("memory: stored record corrupt")
	// ErrSchemaNewer reports a SQL schema written by a newer program.
	ErrSchemaNewer = errors.New("memory: the SQL schema is newer than this program")
	// ErrClosed reports a call on a closed Store.
	ErrClosed = errors.New("memory: store closed")
)

// The writes a Put makes, in order; WriteError.Write is one of them.
const (
	// WriteChain is the append of the witnessing chain block.
	WriteChain = "chain"
	// WritePrimary is the write of the memory and its outbox entry to the
	// primary store (Badger).
	WritePrimary = "primary"
	// WriteSecondary is the write of the memory to the SQL store.
	WriteSecondary = "secondary"
)

// WriteError reports which write of a Put failed. Nothing written before
// it is undone: after a failed WriteSecondary the memory is durable in the
// primary store with an outbox entry, and the replicator copies it to the
// SQL store once that store answers again.
type WriteError struct {
	// Write is WriteChain, WritePrimary or WriteSecondary.
	Write string
	// Backend is the store that failed: "chain", "badger", "sqlite" or
	// "postgres".
	Backend string
	// ID is the memory's id.
	ID  string
	Err error
}

// Error describes the failed write.
func (e *WriteError) Error() string {
	return fmt.Sprintf("memory: %s write (%s) of memory %s failed: %v", e.Write, e.Backend, e.ID, e.Err)
}

// Unwrap returns ErrWriteFailed and the cause.
func (e *WriteError) Unwrap() []error { return []error{ErrWriteFailed, e.Err} }
