package ledger

import "encoding/json"

// TableRow is one row of the public strict table (GET /api/ledger/strict-table
// and its aliases): the block's public metadata, whether the row is on the
// canonical spine, and its break, if it has one. It never carries a
// description or a payload, and there is deliberately no way to add them.
type TableRow struct {
	Block   Block
	OnSpine bool
	Break   *Break // nil when the row satisfies the strict rule
}

// MarshalJSON encodes the block's public members plus "on_spine" and
// "break".
func (r TableRow) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		blockJSON
		OnSpine bool   `json:"on_spine"`
		Break   *Break `json:"break"`
	}{r.Block.wire(), r.OnSpine, r.Break})
}

// NewTableRows annotates a run of consecutive table rows with what verdict v
// found: blocks[0] is at table position first (0 for the first row).
// Rows appended after v's walk count as on the spine, as Extend did.
func NewTableRows(blocks []Block, first int, v Verdict) []TableRow {
	off := make(map[int64]bool, len(v.OffSpineRows))
	for _, i := range v.OffSpineRows {
		off[i] = true
	}
	breaks := make(map[int]Break, len(v.StrictTableBreaks))
	for _, b := range v.StrictTableBreaks {
		breaks[b.Position] = b
	}
	rows := make([]TableRow, len(blocks))
	for i, b := range blocks {
		rows[i] = TableRow{Block: b, OnSpine: !off[b.Index()]}
		if br, ok := breaks[first+i]; ok && br.Block == b.Index() {
			rows[i].Break = &br
		}
	}
	return rows
}
