package live

import (
	"reflect"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/ai"
)

// tricky are strings whose canonical form differs from what encoding/json
// writes: escapes, HTML characters, line separators, invalid UTF-8.
var tricky = []string{
	"", "plain", `quote " and backslash \ and slash /`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"<html> & </html>", "line\u2028para\u2029", "é ü 中文 🜂", "bad \xff byte", "\xed\xa0\x80 encoded surrogate",
	"cut \xe2\x82", "\xc3", "\u00ad soft hyphen \ufeff bom",
}

// fill sets every field of the struct v points to, through embedded
// structs, to something not empty: strings to s, bools to true, slices to
// one filled element, times to at. Pointers stay nil (a signed answer has
// no receipt yet).
func fill(v reflect.Value, s string, at time.Time) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), s, at)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(at))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s, at)
			}
		}
	}
}

// TestAnswerCanonical holds the answers' own canonical JSON to
// ledger.MarshalCanonical of the same value (encoding/json, then RFC 8785):
// with every field set, so that a member added to an answer and not to
// appendWith fails here, and with the fields left empty that may be.
func TestAnswerCanonical(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 30, 1, 120_000_000, time.UTC)
	for _, s := range tricky {
		for _, a := range []canonicalAnswer{&NodeAnswer{}, &ChatAnswer{}, &QueryAnswer{}} {
			fill(reflect.ValueOf(a).Elem(), s, at)
			checkCanonical(t, a)
		}
	}
	empty := ai.Reply{Node: "S2_CASE", Provider: "fake", Model: "m", Text: "t", Citations: []ai.Citation{}}
	for _, a := range []canonicalAnswer{
		&NodeAnswer{Reply: empty, Fresh: Fresh{GeneratedAt: at}},
		&NodeAnswer{Reply: ai.Reply{Node: "S2_CASE"}},
		&ChatAnswer{NodeAnswer: NodeAnswer{Reply: empty, Fresh: fresh()}},
		&QueryAnswer{NodeAnswer: NodeAnswer{Reply: empty, Fresh: fresh()}, Recorded: queryRecorded},
		&QueryAnswer{NodeAnswer: NodeAnswer{Reply: empty}},
	} {
		checkCanonical(t, a)
	}
}

func checkCanonical(t *testing.T, a canonicalAnswer) {
	t.Helper()
	want, err := ledger.MarshalCanonical(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.appendCanonical(nil); string(got) != string(want) {
		t.Errorf("%T:\n got %s\nwant %s", a, got, want)
	}
}

// FuzzCanonicalString holds appendCanonicalString to encoding/json's
// string, made canonical.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := ledger.MarshalCanonical(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendCanonicalString(nil, s); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
