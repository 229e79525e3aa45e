package live

import (
	"bytes"
	"encoding/json"
	"io"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	sjson "github.com/segmentio/encoding/json"
)

// The two hottest live routes, /api/ledger/verify and /api/chain/status,
// answer with a document that changes only when the chain does, plus a
// request-time generated_at. Building and encoding that document on every
// request was most of their cost (make bench-http). Instead each route
// keeps its last document and its encoding (docMemo) and hands huma a body
// that carries them with the request time; jsonFormat writes the encoding
// and generated_at together. A signed answer of the AI routes is written
// as it was signed (NodeAnswer's encoding, see aiEdge.signed): its
// canonical JSON with the receipt as last member, encoded once. Anything
// else goes through huma's JSON format unchanged, and the bytes are the
// same as that format would write.

// preEncoded is a response body that may carry its document's encoding.
type preEncoded interface {
	// encoded returns the JSON object of the body without generated_at,
	// and generated_at; doc is nil when the body must be encoded as usual.
	encoded() (doc []byte, generatedAt time.Time)
}

// signedEncoding is an answer that may carry its encoding as it is sent
// (NodeAnswer, see aiEdge.signed).
type signedEncoding interface {
	// signedJSON returns the answer's JSON, or nil when it must be encoded
	// as usual.
	signedJSON() []byte
}

// jsonFormat is huma's JSON format, except that a preEncoded body holding
// its document, or a signed answer holding its encoding, is written from
// it.
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		if s, ok := v.(signedEncoding); ok {
			if data := s.signedJSON(); data != nil {
				if _, err := w.Write(data); err != nil {
					return err
				}
				_, err := w.Write([]byte{'\n'}) // as huma's format ends a body
				return err
			}
		}
		if p, ok := v.(preEncoded); ok {
			if doc, at := p.encoded(); doc != nil {
				return writeWithGeneratedAt(w, doc, at)
			}
		}
		return huma.DefaultJSONFormat.Marshal(w, v)
	},
	// Bodies reach huma checked by the pipeline (strict JSON: well formed,
	// no duplicate or case-folded names), and huma decodes each twice (to
	// validate it, then into the input): segmentio's decoder, a drop-in for
	// encoding/json's, does it several times faster.
	Unmarshal: sjson.Unmarshal,
}

// writeWithGeneratedAt writes the JSON object doc with a last member
// "generated_at": at, and a newline: byte for byte what huma's format
// writes for the document with an embedded Fresh.
func writeWithGeneratedAt(w io.Writer, doc []byte, at time.Time) error {
	if _, err := w.Write(doc[:len(doc)-1]); err != nil { // without the closing brace
		return err
	}
	var buf [64]byte
	_, err := w.Write(appendGeneratedAt(buf[:0], at, len(doc) > 2))
	return err
}

// appendGeneratedAt appends what ends a JSON object with an embedded Fresh
// after its other members (if it has some), as huma's format writes it:
// "generated_at": at, the closing brace and a newline.
func appendGeneratedAt(b []byte, at time.Time, some bool) []byte {
	if some {
		b = append(b, ',')
	}
	b = append(b, `"generated_at":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"', '}', '\n')
}

// docMemo keeps one route's last document and its encoding, for the chain
// version and day it was built for: while neither changes, the document is
// neither built nor encoded again. It is safe for concurrent use.
type docMemo[D any] struct {
	last atomic.Pointer[memoEntry[D]]
}

type memoEntry[D any] struct {
	version uint64 // Chain.Version the document was built after
	day     int64
	doc     D
	json    []byte // as huma's JSON format writes doc, without the newline
}

// get returns the document for the chain at version and day, built by build
// on a change, and its encoding as huma's JSON format writes it (no HTML
// escaping), without the trailing newline. Neither may be modified. build
// reads the chain after version was read, so a document is never older
// than the version it is kept for; at worst a newer one is built again.
func (m *docMemo[D]) get(version uint64, day int64, build func() D) (D, []byte, error) {
	if e := m.last.Load(); e != nil && e.version == version && e.day == day {
		return e.doc, e.json, nil
	}
	doc := build()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return doc, nil, err
	}
	e := &memoEntry[D]{version: version, day: day, doc: doc, json: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
	m.last.Store(e)
	return e.doc, e.json, nil
}
