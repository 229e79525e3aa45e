package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
)

// ExportFormat is the format name on the first line of every export.
const ExportFormat = "proofsite-ledger-export/1"

// maxLine bounds one JSONL line (a block with its private payload).
const maxLine = 16 << 20

// ExportHeader is the first line of an export. Everything in it is the
// exporter's claim, information rather than authority: an auditor pins the
// genesis hash, the keys and the seams from the trust document instead, and
// a verifier never takes seams from here. The checkpoint, when present, is
// the C2SP signed note over the exported rows; a verifier checks its
// signature against the pinned checkpoint key and its root against the rows.
//
//	{"format":"proofsite-ledger-export/1","genesis_hash":"…","keys":[{"key_id":"…","public_key":"…","role":"writer"}],"documented_seams":[{"block":153,"hash":"…","prev_hash":"…","reason":"…"}],"private":false,"checkpoint":"<origin>\n<size>\n<root>\n\n— <origin> <signature>\n"}
type ExportHeader struct {
	Format          string         `json:"format"`
	GenesisHash     Hash           `json:"genesis_hash"`
	Keys            []PublishedKey `json:"keys"`
	DocumentedSeams []Seam         `json:"documented_seams"`
	Private         bool           `json:"private"`              // rows carry descriptions and payloads
	Checkpoint      string         `json:"checkpoint,omitempty"` // signed checkpoint note over the rows (optional)
}

var headerFields = []string{"format", "genesis_hash", "keys", "documented_seams", "private", "checkpoint"}

// Private is the part of a block that is not published: the description and
// the canonical payload whose SHA-256 is the block's payload_hash.
type Private struct {
	Description string          `json:"description"`
	Payload     json.RawMessage `json:"payload"`
}

// Row is one row of the table: a block and, when the reader holds it, its
// private part (a private export, the store). CheckRow checks the payload
// against payload_hash. A row read from a store says where it was stored:
// StoredUnder is the index of its storage key when Stored is set.
type Row struct {
	Block       Block
	Private     *Private
	StoredUnder int64
	Stored      bool
}

// rowJSON is the wire form of a Row: the block's members, then the private
// ones when present.
type rowJSON struct {
	blockJSON
	Description *string         `json:"description,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// Writer writes an export: the header line, then one row per line.
type Writer struct {
	bw  *bufio.Writer
	enc *json.Encoder
	hdr ExportHeader
}

// NewWriter writes the header line to w and returns a Writer for the rows.
// Call Flush when done.
func NewWriter(w io.Writer, h ExportHeader) (*Writer, error) {
	h.Format = ExportFormat
	if h.Keys == nil {
		h.Keys = []PublishedKey{}
	}
	if h.DocumentedSeams == nil {
		h.DocumentedSeams = []Seam{}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("ledger: write export header: %w", err)
	}
	return &Writer{bw: bw, enc: enc, hdr: h}, nil
}

// Write writes one row. The private part is written only in a private export.
func (w *Writer) Write(r Row) error {
	out := rowJSON{blockJSON: r.Block.wire()}
	if w.hdr.Private && r.Private != nil {
		d := r.Private.Description
		out.Description, out.Payload = &d, r.Private.Payload
	}
	if err := w.enc.Encode(out); err != nil {
		return fmt.Errorf("ledger: write block %d: %w", r.Block.Index(), err)
	}
	return nil
}

// Flush writes buffered rows to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Reader reads an export written by Writer. It is strict: the header must
// name ExportFormat, every line must decode (DecodeBlock rules; private
// members only in a private export, a payload must be valid JSON), and
// blank lines are errors. Whether a payload hashes to payload_hash is a
// verification (CheckRow), not a reading error.
type Reader struct {
	sc     *bufio.Scanner
	line   int
	header ExportHeader
	keys   KeySet
}

// NewReader reads and checks the header line (including the keys it
// publishes) and returns a Reader positioned at the first row.
func NewReader(r io.Reader) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	rd := &Reader{sc: sc}
	line, err := rd.nextLine()
	if errors.Is(err, io.EOF) {
		return nil, &LineError{Line: 1, Err: fmt.Errorf("%w: missing header line", ErrInvalidExport)}
	}
	if err != nil {
		return nil, err
	}
	if err := rd.parseHeader(line); err != nil {
		return nil, &LineError{Line: rd.line, Err: err}
	}
	return rd, nil
}

func (r *Reader) parseHeader(line []byte) error {
	if err := ValidateJSON(line); err != nil {
		return fmt.Errorf("%w: header: %w", ErrInvalidExport, err)
	}
	members, err := objectMembers(line, headerFields[:4], headerFields[4:])
	if err != nil {
		return fmt.Errorf("%w: header: %w", ErrInvalidExport, err)
	}
	var format string
	if err := json.Unmarshal(members["format"], &format); err != nil || format != ExportFormat {
		return fmt.Errorf("%w: format is %s, want %q", ErrInvalidExport, members["format"], ExportFormat)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.header); err != nil {
		return fmt.Errorf("%w: header: %w", ErrInvalidExport, err)
	}
	keys, err := NewKeySet(r.header.Keys)
	if err != nil {
		return fmt.Errorf("%w: header keys: %w", ErrInvalidExport, err)
	}
	r.keys = keys
	return nil
}

func (r *Reader) nextLine() ([]byte, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return nil, &LineError{Line: r.line + 1, Err: fmt.Errorf("%w: %w", ErrInvalidExport, err)}
		}
		return nil, io.EOF
	}
	r.line++
	return r.sc.Bytes(), nil
}

// Header returns the export's header line.
func (r *Reader) Header() ExportHeader { return r.header }

// Keys returns the keys the header publishes, parsed and checked.
func (r *Reader) Keys() KeySet { return r.keys }

// Options returns the verification options for this export. The pins come
// from trust when it is given (TrustDocument.Options); without it, the keys
// and the genesis hash are the header's (which proves only that the export
// agrees with itself) and no seam is documented: the header's seams are
// never authority. The header's signed checkpoint, if any, is presented
// for checking against the rows.
func (r *Reader) Options(trust *TrustDocument) (Options, error) {
	opts := Options{Keys: r.keys, Genesis: r.header.GenesisHash}
	if trust != nil {
		var err error
		if opts, err = trust.Options(); err != nil {
			return Options{}, err
		}
		if trust.Legacy() {
			opts.Genesis = r.header.GenesisHash
		}
	}
	if r.header.Checkpoint != "" {
		opts.PresentedCheckpoint = []byte(r.header.Checkpoint)
	}
	return opts, nil
}

// Next returns the next row, or io.EOF after the last.
func (r *Reader) Next() (Row, error) {
	line, err := r.nextLine()
	if err != nil {
		return Row{}, err
	}
	row, err := decodeRow(line, r.header.Private)
	if err != nil {
		return Row{}, &LineError{Line: r.line, Err: err}
	}
	return row, nil
}

// Rows returns the remaining rows as a sequence for VerifyRows (with their
// private parts in a private export); a read error ends it.
func (r *Reader) Rows() iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

// Blocks returns the remaining rows' blocks as a sequence for Verify; a read
// error ends it.
func (r *Reader) Blocks() iter.Seq2[Block, error] {
	return func(yield func(Block, error) bool) {
		for {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(row.Block, err) || err != nil {
				return
			}
		}
	}
}

// HistoryRow is one line of content/ledger/history.jsonl, the published past
// of the chain before this instance's keys signed it. Each row links to the
// row before it unless PrevIndex names an earlier row: that reproduces a
// documented seam (row 153 linking to 151 leaves row 152 off the spine).
//
//	{"index":0,"timestamp":"2025-01-06T09:00:00Z","kind":"genesis","description":"…","payload":{…}}
type HistoryRow struct {
	Index       int64           `json:"index"`
	Timestamp   string          `json:"timestamp"`
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Payload     json.RawMessage `json:"payload"`
	PrevIndex   *int64          `json:"prev_index,omitempty"`
}

var historyFields = []string{"index", "timestamp", "kind", "description", "payload"}

// ReadHistory reads history rows strictly (exact member names, no unknown
// members, indexes 0, 1, 2, … in order, PrevIndex below the row's index,
// payloads that Canonicalize accepts).
func ReadHistory(r io.Reader) ([]HistoryRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var rows []HistoryRow
	for line := 1; sc.Scan(); line++ {
		row, err := decodeHistoryRow(sc.Bytes(), int64(len(rows)))
		if err != nil {
			return nil, &LineError{Line: line, Err: err}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidExport, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: history is empty", ErrInvalidExport)
	}
	return rows, nil
}

func decodeHistoryRow(line []byte, want int64) (HistoryRow, error) {
	if err := ValidateJSON(line); err != nil {
		return HistoryRow{}, fmt.Errorf("%w: %w", ErrInvalidExport, err)
	}
	if _, err := objectMembers(line, historyFields, []string{"prev_index"}); err != nil {
		return HistoryRow{}, fmt.Errorf("%w: %w", ErrInvalidExport, err)
	}
	var row HistoryRow
	if err := json.Unmarshal(line, &row); err != nil {
		return HistoryRow{}, fmt.Errorf("%w: %w", ErrInvalidExport, err)
	}
	switch {
	case row.Index != want:
		return HistoryRow{}, fmt.Errorf("%w: index %d, want %d", ErrInvalidExport, row.Index, want)
	case row.PrevIndex != nil && (*row.PrevIndex < 0 || *row.PrevIndex >= row.Index):
		return HistoryRow{}, fmt.Errorf("%w: prev_index %d must be below index %d", ErrInvalidExport, *row.PrevIndex, row.Index)
	}
	return row, nil
}

// SealHistory seals history rows with s, in order, and returns the blocks
// with their private parts. Row i links to row i−1 or to row PrevIndex.
func SealHistory(rows []HistoryRow, s Signers) ([]Block, []Private, error) {
	blocks := make([]Block, 0, len(rows))
	privs := make([]Private, 0, len(rows))
	for i, r := range rows {
		if r.Index != int64(i) {
			return nil, nil, fmt.Errorf("%w: history row %d has index %d", ErrInvalidExport, i, r.Index)
		}
		ph, canon, err := PayloadHash(r.Payload)
		if err != nil {
			return nil, nil, fmt.Errorf("history row %d: %w", i, err)
		}
		h := Header{Index: r.Index, Timestamp: r.Timestamp, Kind: r.Kind, PayloadHash: ph}
		if i > 0 {
			prev := i - 1
			if r.PrevIndex != nil {
				prev = int(*r.PrevIndex)
			}
			h.PrevHash = blocks[prev].hash
		}
		b, err := Seal(h, s)
		if err != nil {
			return nil, nil, fmt.Errorf("history row %d: %w", i, err)
		}
		blocks = append(blocks, b)
		privs = append(privs, Private{Description: r.Description, Payload: canon})
	}
	return blocks, privs, nil
}
