package memory

import (
	"slices"
	"time"
)

// The problems the reconciler reports (Divergence.Problem).
const (
	// ProblemMissingInSecondary: the primary holds the memory, the SQL
	// store does not. Repaired from the primary.
	ProblemMissingInSecondary = "missing_in_secondary"
	// ProblemHashMismatch: both hold the id with different records.
	// Repaired from the primary when this replica wrote the SQL row;
	// reported only when another replica did.
	ProblemHashMismatch = "hash_mismatch"
	// ProblemMissingInPrimary: the SQL store holds a row this replica
	// wrote that its primary does not. Never repaired: the SQL store alone
	// is not a source.
	ProblemMissingInPrimary = "missing_in_primary"
	// ProblemWitness: the chain block the memory names does not witness
	// it. Never repaired: the chain is append-only.
	ProblemWitness = "witness_invalid"
	// ProblemPrimaryCorrupt: the primary's record does not decode or its
	// derived fields disagree. Never repaired.
	ProblemPrimaryCorrupt = "primary_corrupt"
)

// Divergence is one problem the reconciler found with one memory.
type Divergence struct {
	ID       string `json:"id"`
	Problem  string `json:"problem"`
	Repaired bool   `json:"repaired"`
	Detail   string `json:"detail,omitempty"`
}

// MaxReported bounds the divergences a Report lists; the counts are exact.
const MaxReported = 1000

// Report is the result of a reconciliation.
type Report struct {
	At time.Time `json:"at"`
	// TookMS is how long it ran, in milliseconds.
	TookMS int64 `json:"took_ms"`
	// Memories is the number of memories in the primary that were checked.
	Memories int64 `json:"memories"`
	// Replicated counts outbox entries delivered on the way.
	Replicated int `json:"replicated"`
	// Repaired and Unrepaired count divergences by outcome.
	Repaired   int `json:"repaired"`
	Unrepaired int `json:"unrepaired"`
	// Divergences lists them (at most MaxReported).
	Divergences []Divergence `json:"divergences"`
}

// DivergentIDs returns the ids with a divergence left unrepaired.
func (r *Report) DivergentIDs() []string {
	ids := []string{}
	for _, d := range r.Divergences {
		if !d.Repaired && !slices.Contains(ids, d.ID) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// Add records d: it counts it as repaired or not, and lists it while the
// list is shorter than MaxReported.
func (r *Report) Add(d Divergence) {
	if d.Repaired {
		r.Repaired++
	} else {
		r.Unrepaired++
	}
	if len(r.Divergences) < MaxReported {
		r.Divergences = append(r.Divergences, d)
	}
}
