package live

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// The two hottest live routes, /api/ledger/verify and /api/chain/status,
// answer with a document that changes only when the chain does, plus a
// request-time generated_at. Building and encoding that document on every
// request was most of their cost (make bench-http). Instead each route
// keeps its last document and its encoding (jsonMemo) and hands huma a body
// that carries them with the request time; jsonFormat writes the encoding
// and generated_at together. Anything else goes through huma's JSON format unchanged, and
// the bytes are the same as that format would write.

// preEncoded is a response body that may carry its document's encoding.
type preEncoded interface {
	// encoded returns the JSON object of the body without generated_at,
	// and generated_at; doc is nil when the body must be encoded as usual.
	encoded() (doc []byte, generatedAt time.Time)
}

// jsonFormat is huma's JSON format, except that a preEncoded body holding
// its document is written from it.
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		if p, ok := v.(preEncoded); ok {
			if doc, at := p.encoded(); doc != nil {
				return writeWithGeneratedAt(w, doc, at)
			}
		}
		return huma.DefaultJSONFormat.Marshal(w, v)
	},
	Unmarshal: huma.DefaultJSONFormat.Unmarshal,
}

// writeWithGeneratedAt writes the JSON object doc with a last member
// "generated_at": at, and a newline: byte for byte what huma's format
// writes for the document with an embedded Fresh.
func writeWithGeneratedAt(w io.Writer, doc []byte, at time.Time) error {
	if _, err := w.Write(doc[:len(doc)-1]); err != nil { // without the closing brace
		return err
	}
	var buf [64]byte
	tail := buf[:0]
	if len(doc) > 2 {
		tail = append(tail, ',')
	}
	tail = append(tail, `"generated_at":"`...)
	tail = at.AppendFormat(tail, time.RFC3339Nano)
	tail = append(tail, '"', '}', '\n')
	_, err := w.Write(tail)
	return err
}

// jsonMemo keeps the last document it built, from a key that says what
// the document is computed from, and the document's encoding. While the key
// stays equal (equalValues), the document is neither built nor encoded
// again. The chain hands out immutable snapshots (store: "state is an
// immutable snapshot"), so memory a cached key shares with a new one holds
// the same data. It is safe for concurrent use.
type jsonMemo[K, D any] struct {
	last    atomic.Pointer[memoEntry[K, D]]
	scratch sync.Pool // of *K, see sameKey
}

type memoEntry[K, D any] struct {
	key  K
	doc  D
	json []byte // as huma's JSON format writes doc, without the newline
}

// get returns the document for key, built by build on a change, and its
// encoding as huma's JSON format writes it (no HTML escaping), without the
// trailing newline. Neither may be modified.
func (m *jsonMemo[K, D]) get(key K, build func(K) D) (D, []byte, error) {
	if e := m.last.Load(); e != nil && m.sameKey(&e.key, key) {
		return e.doc, e.json, nil
	}
	doc := build(key)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return doc, nil, err
	}
	e := &memoEntry[K, D]{key: key, doc: doc, json: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
	m.last.Store(e)
	return e.doc, e.json, nil
}

// sameKey reports whether key equals *cached. reflect needs the key behind
// a pointer, which would move every request's key to the heap; a pooled copy
// does not allocate.
func (m *jsonMemo[K, D]) sameKey(cached *K, key K) bool {
	p, _ := m.scratch.Get().(*K)
	if p == nil {
		p = new(K)
	}
	*p = key
	same := equalValues(reflect.ValueOf(cached).Elem(), reflect.ValueOf(p).Elem(), 0)
	var zero K
	*p = zero // keep no snapshot alive from the pool
	m.scratch.Put(p)
	return same
}

// maxEqualDepth bounds equalValues; deeper values count as different.
const maxEqualDepth = 16

// equalValues reports whether a and b, of the same type, hold equal data:
// reflect.DeepEqual without its bookkeeping for cycles (which allocated on
// every call). Memory both share counts as equal without being read. Past
// maxEqualDepth, and for kinds JSON cannot encode, it answers false, which
// only costs the memo a new encoding. Nil and empty slices and maps differ,
// as they do in JSON.
func equalValues(a, b reflect.Value, depth int) bool {
	if depth > maxEqualDepth {
		return false
	}
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.Pointer() == b.Pointer() {
			return a.Pointer() == b.Pointer()
		}
		return equalValues(a.Elem(), b.Elem(), depth+1)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Elem().Type() == b.Elem().Type() && equalValues(a.Elem(), b.Elem(), depth+1)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.Len() == 0 || a.Pointer() == b.Pointer() {
			return true
		}
		return equalElems(a, b, depth)
	case reflect.Array:
		return equalElems(a, b, depth)
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.Pointer() == b.Pointer() {
			return true
		}
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equalValues(it.Value(), bv, depth+1) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalValues(a.Field(i), b.Field(i), depth+1) {
				return false
			}
		}
		return true
	default: // complex, chan, func, unsafe pointer
		return false
	}
}

// equalElems compares slices or arrays of the same length element by
// element, and bytes all at once.
func equalElems(a, b reflect.Value, depth int) bool {
	if a.Type().Elem().Kind() == reflect.Uint8 && (a.Kind() == reflect.Slice || a.CanAddr() && b.CanAddr()) {
		return bytes.Equal(a.Bytes(), b.Bytes())
	}
	for i := range a.Len() {
		if !equalValues(a.Index(i), b.Index(i), depth+1) {
			return false
		}
	}
	return true
}
