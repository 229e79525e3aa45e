package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var at = time.Date(2025, 1, 6, 9, 0, 0, 123456789, time.UTC)

func TestNewMemory(t *testing.T) {
	tests := []struct {
		desc    string
		draft   Draft
		wantErr error
		content string // canonical content when valid
	}{
		{desc: "object, canonicalized", draft: Draft{"case", json.RawMessage(`{ "b": 1, "a": "x" }`)}, content: `{"a":"x","b":1}`},
		{desc: "plain text", draft: Draft{"tars", json.RawMessage(`"remember the seam at 153"`)}, content: `"remember the seam at 153"`},
		{desc: "array", draft: Draft{"kipp", json.RawMessage(`[1, 2.50, true]`)}, content: `[1,2.5,true]`},
		{desc: "node upper case", draft: Draft{"Case", json.RawMessage(`"x"`)}, wantErr: ErrInvalid},
		{desc: "node empty", draft: Draft{"", json.RawMessage(`"x"`)}, wantErr: ErrInvalid},
		{desc: "node with slash", draft: Draft{"a/b", json.RawMessage(`"x"`)}, wantErr: ErrInvalid},
		{desc: "node too long", draft: Draft{strings.Repeat("a", 33), json.RawMessage(`"x"`)}, wantErr: ErrInvalid},
		{desc: "content missing", draft: Draft{"case", nil}, wantErr: ErrInvalid},
		{desc: "content null", draft: Draft{"case", json.RawMessage(`null`)}, wantErr: ErrInvalid},
		{desc: "content not JSON", draft: Draft{"case", json.RawMessage(`{"a":`)}, wantErr: ledger.ErrInvalidJSON},
		{desc: "duplicate key", draft: Draft{"case", json.RawMessage(`{"a":1,"a":2}`)}, wantErr: ledger.ErrDuplicateKey},
		{desc: "lone surrogate", draft: Draft{"case", json.RawMessage(`"\ud800"`)}, wantErr: ledger.ErrLoneSurrogate},
		{desc: "integer beyond 2^53", draft: Draft{"case", json.RawMessage(`9007199254740993`)}, wantErr: ledger.ErrIntegerRange},
		{desc: "too large", draft: Draft{"case", json.RawMessage(`"` + strings.Repeat("x", MaxContentBytes) + `"`)}, wantErr: ErrInvalid},
		{desc: "far too large", draft: Draft{"case", json.RawMessage(strings.Repeat(" ", 4*MaxContentBytes+1) + `"x"`)}, wantErr: ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			m, err := New(tc.draft, at)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want %v (and ErrInvalid)", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Content) != tc.content {
				t.Fatalf("content = %s, want %s", m.Content, tc.content)
			}
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestIDDerivation recomputes the id and content hash from their
// documented definitions, by hand.
func TestIDDerivation(t *testing.T) {
	m, err := New(Draft{"case", json.RawMessage(` "hello" `)}, at)
	if err != nil {
		t.Fatal(err)
	}
	id := sha256.Sum256([]byte(`{"content":"hello","node_id":"case"}`))
	if m.ID != hex.EncodeToString(id[:]) {
		t.Fatalf("id = %s, want %x", m.ID, id)
	}
	if m.ContentHash != sha256.Sum256([]byte(`"hello"`)) {
		t.Fatalf("content_hash = %s", m.ContentHash)
	}
	if !m.CreatedAt.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("created_at = %v", m.CreatedAt)
	}
	other, _ := New(Draft{"tars", json.RawMessage(`"hello"`)}, at)
	if other.ID == m.ID {
		t.Fatal("two nodes with the same content share an id")
	}
}

// TestMemoryGolden pins the JSON of a memory and its witness payload.
func TestMemoryGolden(t *testing.T) {
	m, err := New(Draft{"plex", json.RawMessage(`{"topic":"wall","text":"signed by a visitor"}`)}, at)
	if err != nil {
		t.Fatal(err)
	}
	m.Witness = Witness{BlockIndex: 201, BlockHash: sha256.Sum256([]byte("block 201"))}
	doc, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := m.WitnessPayload()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, *update, "memory.golden", append(append(doc, '\n'), append(payload, '\n')...))

	var back Memory
	if err := json.Unmarshal(doc, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Check(); err != nil {
		t.Fatal(err)
	}
	h1, _ := m.Hash()
	h2, _ := back.Hash()
	if h1 != h2 || !back.CreatedAt.Equal(m.CreatedAt) || back.Witness != m.Witness {
		t.Fatalf("round trip changed the memory: %+v", back)
	}
}

func TestCheckFindsTampering(t *testing.T) {
	m, err := New(Draft{"forge", json.RawMessage(`{"a":1}`)}, at)
	if err != nil {
		t.Fatal(err)
	}
	tamper := map[string]func(*Memory){
		"content":         func(m *Memory) { m.Content = json.RawMessage(`{"a":2}`) },
		"non-canonical":   func(m *Memory) { m.Content = json.RawMessage(`{ "a":1}`) },
		"content hash":    func(m *Memory) { m.ContentHash[0] ^= 1 },
		"id":              func(m *Memory) { m.ID = strings.Repeat("0", 64) },
		"node":            func(m *Memory) { m.NodeID = "case" },
		"invalid content": func(m *Memory) { m.Content = json.RawMessage(`{`) },
	}
	for name, f := range tamper {
		t.Run(name, func(t *testing.T) {
			c := m
			f(&c)
			if err := c.Check(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Check = %v, want ErrCorrupt", err)
			}
		})
	}
	for _, doc := range []string{
		`{"content":1,"content_hash":"` + m.ContentHash.String() + `","created_at":"2025-01-06T09:00:00Z","id":"x","node_id":"forge","witness":{"block_hash":"` + m.ContentHash.String() + `","block_index":1}}`,
		`{"content":1,"extra":true}`,
	} {
		var back Memory
		if err := json.Unmarshal([]byte(doc), &back); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decoding %s: %v, want ErrCorrupt", doc, err)
		}
	}
}
