package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

type inner struct {
	Name string `json:"name"`
	Rank int    `json:"rank,omitempty"`
}

type base struct {
	Version string `json:"version"`
	Shadow  string `json:"shadow"`
}

// request exercises what encoding/json decides about names: tags, Go
// names, skipped and unexported fields, embedding and shadowing, pointers,
// slices, maps and values that decode themselves.
type request struct {
	base
	Agent  string `json:"agent"`
	Shadow int    `json:"shadow,omitempty"`
	Plain  bool   // no tag: the Go name
	//lint:ignore SA5008 encoding/json names this field "-"
	Dash    string `json:"-,"`
	Skipped string `json:"-"`
	//lint:ignore U1000 an unexported field is never decoded
	hidden string
	Caps   []string          `json:"capabilities,omitempty"`
	Inner  *inner            `json:"inner,omitempty"`
	List   []inner           `json:"list,omitempty"`
	Labels map[string]inner  `json:"labels,omitempty"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Any    any               `json:"any,omitempty"`
	Extra  map[string]string `json:"extra,omitempty"`
}

type open struct {
	Agent string   `json:"agent"`
	_     struct{} `additionalProperties:"true"`
}

func TestCheck(t *testing.T) {
	tests := []struct {
		desc    string
		doc     string
		into    reflect.Type
		want    error
		pointer string
		field   string
	}{
		{"valid", `{"agent":"a","version":"1","Plain":true,"-":"d","capabilities":["x"],"inner":{"name":"n"}}`, reflect.TypeFor[request](), nil, "", ""},
		{"embedded field", `{"version":"1"}`, reflect.TypeFor[request](), nil, "", ""},
		{"white space around", " \n{\"agent\":\"a\"}\r\n\t", reflect.TypeFor[request](), nil, "", ""},
		{"anything into nil", `[1,{"a":null},"x"]`, nil, nil, "", ""},
		{"raw values are not looked into", `{"raw":{"Agent":1,"whatever":2}}`, reflect.TypeFor[request](), nil, "", ""},
		{"interface values are not looked into", `{"any":{"AGENT":1}}`, reflect.TypeFor[request](), nil, "", ""},
		{"map keys are free", `{"labels":{"k1":{"name":"a"},"K1":{"name":"b"}}}`, reflect.TypeFor[request](), nil, "", ""},
		{"open struct takes other members", `{"agent":"a","other":1}`, reflect.TypeFor[open](), nil, "", ""},

		{"duplicate declared member", `{"agent":"a","agent":"b"}`, reflect.TypeFor[request](), ErrDuplicate, "", "agent"},
		{"duplicate nested", `{"inner":{"name":"a","name":"b"}}`, reflect.TypeFor[request](), ErrDuplicate, "/inner", "name"},
		{"duplicate in a list element", `{"list":[{},{"name":"a","name":"b"}]}`, reflect.TypeFor[request](), ErrDuplicate, "/list/1", "name"},
		{"duplicate map key is not named", `{"extra":{"secret":"a","secret":"b"}}`, reflect.TypeFor[request](), ErrDuplicate, "/extra", ""},
		{"duplicate in an untyped value", `{"a":1,"a":2}`, nil, ErrDuplicate, "", ""},
		{"duplicate escaped in an untyped value", `{"x":[{"a":1,"\u0061":2}]}`, nil, ErrDuplicate, "", ""},
		{"duplicate after a nested object", `{"a":{"b":1,"c":2},"b":3,"a":4}`, nil, ErrDuplicate, "", ""},
		{"duplicate among many members", `{` + manyMembers(100) + `,"m7":0}`, nil, ErrDuplicate, "", ""},
		{"names repeat in sibling objects", `[{"a":1,"b":{"a":2}},{"a":3,"b":"a"},{"\"a":4,"a\\":5,"a":"\"a"}]`, nil, nil, "", ""},
		{"many members", `{` + manyMembers(100) + `}`, nil, nil, "", ""},
		{"duplicate in an open struct", `{"other":1,"other":2}`, reflect.TypeFor[open](), ErrDuplicate, "", ""},
		{"duplicate under a map key points at the map", `{"labels":{"secret":{"name":"a","name":"b"}}}`, reflect.TypeFor[request](), ErrDuplicate, "/labels", "name"},

		{"case differs from a tag name", `{"AGENT":"a"}`, reflect.TypeFor[request](), ErrCaseMismatch, "", "agent"},
		{"case differs from a Go name", `{"plain":true}`, reflect.TypeFor[request](), ErrCaseMismatch, "", "Plain"},
		{"case differs after the exact name", `{"agent":"a","Agent":"b"}`, reflect.TypeFor[request](), ErrCaseMismatch, "", "agent"},
		{"case differs nested", `{"inner":{"Name":"a"}}`, reflect.TypeFor[request](), ErrCaseMismatch, "/inner", "name"},
		{"case differs in an open struct", `{"Agent":"a"}`, reflect.TypeFor[open](), ErrCaseMismatch, "", "agent"},
		{"Kelvin sign folds to k", "{\"ran\u212a\":1}", reflect.TypeFor[inner](), ErrCaseMismatch, "", "rank"},

		{"unknown member", `{"agent":"a","token":"secret"}`, reflect.TypeFor[request](), ErrUnknownMember, "", ""},
		{"skipped field is unknown", `{"Skipped":"x"}`, reflect.TypeFor[request](), ErrUnknownMember, "", ""},
		{"unexported field is unknown", `{"hidden":"x"}`, reflect.TypeFor[request](), ErrUnknownMember, "", ""},
		{"unknown nested", `{"list":[{"name":"a","x":1}]}`, reflect.TypeFor[request](), ErrUnknownMember, "/list/0", ""},

		{"invalid UTF-8 in a string", "{\"agent\":\"a\xff\"}", reflect.TypeFor[request](), ErrInvalidUTF8, "", ""},
		{"invalid UTF-8 in a name", "{\"ag\xc3\":1}", nil, ErrInvalidUTF8, "", ""},
		{"lone high surrogate", `{"agent":"\ud800"}`, reflect.TypeFor[request](), ErrInvalidUTF8, "", ""},
		{"lone low surrogate", `{"agent":"\udc00x"}`, reflect.TypeFor[request](), ErrInvalidUTF8, "", ""},
		{"high surrogate before a non-surrogate", `{"agent":"\ud800\u0041"}`, reflect.TypeFor[request](), ErrInvalidUTF8, "", ""},
		{"a surrogate pair is fine", `{"agent":"\ud83d\ude00"}`, reflect.TypeFor[request](), nil, "", ""},
		{"an escaped backslash is not an escape", `{"agent":"\\ud800"}`, reflect.TypeFor[request](), nil, "", ""},

		{"trailing value", `{"agent":"a"}{"agent":"b"}`, reflect.TypeFor[request](), ErrTrailingData, "", ""},
		{"trailing garbage", `{"agent":"a"} x`, reflect.TypeFor[request](), ErrTrailingData, "", ""},
		{"trailing number", `1 2`, nil, ErrTrailingData, "", ""},

		{"empty", ``, reflect.TypeFor[request](), ErrSyntax, "", ""},
		{"truncated", `{"agent":`, reflect.TypeFor[request](), ErrSyntax, "/agent", ""},
		{"single quotes", `{'agent':'a'}`, reflect.TypeFor[request](), ErrSyntax, "", ""},
		{"comment", `{"agent":"a" /* x */}`, reflect.TypeFor[request](), ErrSyntax, "", ""},
		{"too deep", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), nil, ErrSyntax, "*", ""},
		{"as deep as allowed", strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), nil, nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			err := Check([]byte(tc.doc), tc.into)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("got %.200v, want %v", err, tc.want)
			}
			if err == nil {
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
			if (tc.pointer != "*" && e.Pointer != tc.pointer) || e.Field != tc.field {
				t.Errorf("pointer %.80q field %q, want %q %q", e.Pointer, e.Field, tc.pointer, tc.field)
			}
			if e.Offset < 0 || e.Offset > int64(len(tc.doc)) {
				t.Errorf("offset %d outside the document", e.Offset)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the document: %v", err)
			}
		})
	}
}

func manyMembers(n int) string {
	m := make([]string, n)
	for i := range m {
		m[i] = `"m` + strconv.Itoa(i) + `":` + strconv.Itoa(i)
	}
	return strings.Join(m, ",")
}

// FuzzCheckAny holds Check of a value of any type, which accepts most
// documents on a quick path (wellFormed), to what the token walker alone
// decides.
func FuzzCheckAny(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":[{"a":2,"a":3}]}`, `{"a":1,"\u0061":2}`, `[{"x":"\"}"},{"x":1}]`, ` {"a" : {"b":{}} , "c":[] } `,
		`{"a":1}x`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{` + manyMembers(70) + `}`, `"x"`, `null`, `{"a":}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data, nil)
		var want error
		if off, ok := invalidUnicode(data); ok {
			want = &Error{Err: ErrInvalidUTF8, Offset: int64(off)}
		} else {
			want = walk(data, nil)
		}
		if (err == nil) != (want == nil) {
			t.Fatalf("Check: %v, the walker: %v: %q", err, want, data)
		}
	})
}

// FuzzCheckStruct holds Check of a struct, which accepts flat objects on
// a quick path (acceptsFlat), to what the token walker alone decides.
func FuzzCheckStruct(f *testing.F) {
	for _, seed := range []string{`{"agent":"a","version":"1"}`, ` { "agent" : "a" , "Plain" : true , "shadow":-1.5e3 } `,
		`{"agent":"a","agent":"b"}`, `{"agent":"a","AGENT":"b"}`, `{"agent":"\u0061","\u0061gent":"b"}`, `{"agent":"a"}x`,
		`{"agent":"\ud800"}`, "{\"agent\":\"\xff\"}", `{"inner":{"name":"n","nope":1}}`, `{"nope":1}`, `{}`, `[]`, `{"agent":}`,
		`{"raw":{"a":1,"a":2}}`, `{"-":"d","capabilities":null}`} {
		f.Add([]byte(seed))
	}
	typ := reflect.TypeFor[request]()
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data, typ)
		var want error
		if off, ok := invalidUnicode(data); ok {
			want = &Error{Err: ErrInvalidUTF8, Offset: int64(off)}
		} else {
			want = walk(data, typ)
		}
		if (err == nil) != (want == nil) {
			t.Fatalf("Check: %v, the walker: %v: %q", err, want, data)
		}
	})
}

func TestUnmarshal(t *testing.T) {
	var r request
	if err := Unmarshal([]byte(`{"agent":"a","inner":{"name":"n"},"labels":{"x":{"rank":2}}}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Agent != "a" || r.Inner.Name != "n" || r.Labels["x"].Rank != 2 {
		t.Errorf("got %+v", r)
	}
	if err := Unmarshal([]byte(`{"agent":1}`), &r); !errors.Is(err, ErrType) {
		t.Errorf("a number for a string: %v", err)
	}
	if err := Unmarshal([]byte(`{}`), r); err == nil {
		t.Error("a non-pointer was accepted")
	}
}

// FuzzUnmarshal checks that Unmarshal never panics, accepts only what
// encoding/json accepts (refusing unknown members) and decodes it the same
// way, and accepts every document encoding/json writes for the type.
func FuzzUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{"agent":"a","version":"1","Plain":true,"-":"d","capabilities":["x"],"inner":{"name":"n","rank":3}}`,
		`{"list":[{"name":"a"},{}],"labels":{"k":{"name":"b"}},"raw":[1,{"x":2}],"any":{"y":null},"extra":{"e":"f"}}`,
		`{"agent":"a","agent":"b"}`, `{"AGENT":"a"}`, `{"agent":"\ud800"}`, `{"agent":"a"} {}`, "{\"agent\":\"\xff\"}",
		`{"shadow":5}`, `[]`, `null`, `{"inner":null}`, `{"agent":"\u00e9\ud83d\ude00"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got request
		err := Unmarshal(data, &got)

		var want request
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		stdErr := dec.Decode(&want)
		if err == nil {
			if stdErr != nil {
				t.Fatalf("strict accepted what encoding/json refuses (%v): %q", stdErr, data)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v, encoding/json %+v: %q", got, want, data)
			}
		}
		if stdErr != nil {
			return
		}
		// Whatever encoding/json makes of it, written back, is strict.
		again, mErr := json.Marshal(want)
		if mErr != nil {
			return // e.g. a raw value that is not JSON on its own
		}
		var round request
		if err := Unmarshal(again, &round); err != nil {
			t.Fatalf("strict refused what encoding/json wrote: %v: %s", err, again)
		}
	})
}

// BenchmarkCheck is the check of a request body as the evaluate route
// sees it: one member, a 2 KB text with line breaks.
func BenchmarkCheck(b *testing.B) {
	prose := "The quarterly review covers the migration of the billing service to the new cluster.\n"
	body, _ := json.Marshal(map[string]string{"text": strings.Repeat(prose, 2048/len(prose)+1)[:2048]})
	typ := reflect.TypeFor[struct {
		Text string `json:"text"`
	}]()
	for b.Loop() {
		if err := Check(body, typ); err != nil {
			b.Fatal(err)
		}
	}
}
