package live

import (
	"context"

	"github.com/proofsite/proofsite/ledger"
)

// Appender records entries on the chain: routes that write (inter-node
// exchanges, wall signatures, gate decisions, anchored certifications) go
// through it. The block is durable when Append returns. cmd passes the
// instance's chain (ledger/chain.Chain); tests pass a small fake.
type Appender interface {
	Append(ctx context.Context, e ledger.Entry) (ledger.Block, error)
}
