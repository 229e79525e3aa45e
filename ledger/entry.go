package ledger

import "time"

// Entry is what an append records: the kind, the JSON payload (canonicalized
// and hashed; the payload and description stay private) and the time (zero
// means now). The store builds, signs and verifies the block; whoever
// appends (the chain's owner, or the live edge through a small interface of
// its own) hands over only an Entry.
type Entry struct {
	Kind        string
	Payload     []byte
	Description string
	Time        time.Time
}
