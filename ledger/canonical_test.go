package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// rfcSample is the example of RFC 8785 section 3.2.2 and its canonical form.
const (
	rfcSample = `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	rfcSampleCanonical = `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
)

// The JCS library itself reproduces the RFC sample; Canonicalize refuses it
// on purpose because of 1E30 (beyond 2^53), and reproduces it otherwise.
func TestCanonicalizeRFCSample(t *testing.T) {
	got, err := jcs.Transform([]byte(rfcSample))
	if err != nil || string(got) != rfcSampleCanonical {
		t.Fatalf("jcs.Transform = %s, %v\nwant %s", got, err, rfcSampleCanonical)
	}
	if _, err := Canonicalize([]byte(rfcSample)); !errors.Is(err, ErrIntegerRange) {
		t.Fatalf("Canonicalize(RFC sample) error = %v, want ErrIntegerRange", err)
	}
	in := strings.Replace(rfcSample, "1E30", "1E15", 1)
	want := strings.Replace(rfcSampleCanonical, "1e+30", "1000000000000000", 1)
	if got, err := Canonicalize([]byte(in)); err != nil || string(got) != want {
		t.Fatalf("Canonicalize = %s, %v\nwant %s", got, err, want)
	}
}

// The examples of RFC 8785 section 3.2.3, and more.
func TestCanonicalizeRFC8785(t *testing.T) {
	tests := []struct {
		desc, in, want string
	}{
		{
			desc: "3.2.3 sorting by UTF-16 code units",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{desc: "nested sorting", in: `{"b":[{"z":1,"a":2}],"a":{"d":null,"c":true}}`, want: `{"a":{"c":true,"d":null},"b":[{"a":2,"z":1}]}`},
		{desc: "control characters", in: `"\u0000\u001f\b\f\t\u007f"`, want: "\"\\u0000\\u001f\\b\\f\\t\u007f\""},
		{desc: "no escaping of non-ASCII or slash", in: `"\u00e9/\u2028"`, want: "\"é/\u2028\""},
		{desc: "largest exact integer", in: `[9007199254740991,-9007199254740991]`, want: `[9007199254740991,-9007199254740991]`},
		{desc: "minus zero", in: `-0`, want: `0`},
		{desc: "exponent forms", in: `[1E-7,9.007199254740991e15,1.5e3,-5e-324]`, want: `[1e-7,9007199254740991,1500,-5e-324]`},
		{desc: "whitespace", in: " \t\r\n{ \"a\" : [ 1 , 2 ] } \n", want: `{"a":[1,2]}`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Appendix B of RFC 8785: IEEE 754 values and their canonical text. The JCS
// library must print every one as the RFC does; Canonicalize, fed the
// shortest round-trip text, must agree for values within ±(2^53−1) and
// refuse the rest.
func TestCanonicalizeNumbersAppendixB(t *testing.T) {
	tests := []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, tc := range tests {
		t.Run(tc.bits, func(t *testing.T) {
			u, err := strconv.ParseUint(tc.bits, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			f := math.Float64frombits(u)
			// Always write an exponent so the literal is a float, not an
			// integer (integers beyond 2^53−1 are refused on purpose).
			in := strconv.FormatFloat(f, 'e', -1, 64)
			if got, err := jcs.NumberToJSON(f); err != nil || got != tc.want {
				t.Errorf("jcs.NumberToJSON(%s) = %s, %v; want %s", in, got, err, tc.want)
			}
			got, err := Canonicalize([]byte(in))
			if math.Abs(f) > maxSafeInteger {
				if !errors.Is(err, ErrIntegerRange) {
					t.Errorf("Canonicalize(%s) = %s, %v; want ErrIntegerRange", in, got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("Canonicalize(%s) = %s, %v; want %s", in, got, err, tc.want)
			}
		})
	}
	for _, bits := range []uint64{0x7fffffffffffffff, 0x7ff0000000000000} { // NaN, Infinity
		if _, err := jcs.NumberToJSON(math.Float64frombits(bits)); err == nil {
			t.Errorf("NumberToJSON(%x) accepted a non-finite number", bits)
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	tests := []struct {
		desc, in string
		want     error
	}{
		{"invalid UTF-8 in string", "\"\xff\"", ErrInvalidUTF8},
		{"overlong UTF-8", "\"\xc0\xaf\"", ErrInvalidUTF8},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", ErrInvalidUTF8},
		{"lone high surrogate", `"\ud800"`, ErrLoneSurrogate},
		{"lone low surrogate", `"\udc00"`, ErrLoneSurrogate},
		{"high surrogate then letter", `"\ud800\u0041"`, ErrLoneSurrogate},
		{"reversed pair", `"\udc00\ud800"`, ErrLoneSurrogate},
		{"duplicate key", `{"a":1,"a":2}`, ErrDuplicateKey},
		{"duplicate key after unescaping", `{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{"nested duplicate key", `[{"x":{"k":1,"k":1}}]`, ErrDuplicateKey},
		{"2^53", `9007199254740992`, ErrIntegerRange},
		{"-2^53", `-9007199254740992`, ErrIntegerRange},
		{"huge integer", `[123456789012345678901234567890]`, ErrIntegerRange},
		{"large float", `1E30`, ErrIntegerRange},
		{"float just past 2^53", `9007199254740993.0`, ErrIntegerRange},
		{"float that prints as an integer", `{"x":1E20}`, ErrIntegerRange},
		{"overflow", `1e400`, ErrIntegerRange},
		{"leading zero", `01`, ErrInvalidJSON},
		{"plus sign", `+1`, ErrInvalidJSON},
		{"bare fraction", `.5`, ErrInvalidJSON},
		{"trailing dot", `1.`, ErrInvalidJSON},
		{"empty exponent", `1e`, ErrInvalidJSON},
		{"hex", `0x10`, ErrInvalidJSON},
		{"NaN", `NaN`, ErrInvalidJSON},
		{"Infinity", `-Infinity`, ErrInvalidJSON},
		{"trailing data", `{} {}`, ErrInvalidJSON},
		{"trailing comma", `[1,]`, ErrInvalidJSON},
		{"single quotes", `{'a':1}`, ErrInvalidJSON},
		{"raw control character", "\"a\tb\"", ErrInvalidJSON},
		{"bad escape", `"\x41"`, ErrInvalidJSON},
		{"empty", ``, ErrInvalidJSON},
		{"too deep", string(make([]byte, 0)) + deep(600), ErrInvalidJSON},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Canonicalize(%q) = %q, %v; want error %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

func TestHeaderPreimageIsCanonical(t *testing.T) {
	strs := []string{"", "audit", "a\"b\\c", "\x00\x01\x1f\x7f", "é€😀", "\u2028\u2029", "</script>&", "tab\there"}
	for i, s := range strs {
		h := Header{Index: int64(i) * 1234567, Timestamp: s, Kind: s, Writer: KeyID(s), PayloadHash: Hash{1, 2}, PrevHash: Hash{0xff}}
		checkPreimage(t, h)
	}
	checkPreimage(t, Header{Index: maxSafeInteger})
}

func checkPreimage(t *testing.T, h Header) {
	t.Helper()
	m := map[string]any{
		"index": h.Index, "timestamp": h.Timestamp, "kind": h.Kind,
		"payload_hash": h.PayloadHash.String(), "prev_hash": h.PrevHash.String(), "writer": string(h.Writer),
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Canonicalize(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Preimage(); string(got) != string(want) {
		t.Errorf("preimage\n got  %s\n want %s", got, want)
	}
}

// FuzzCanonicalize checks that whatever Canonicalize accepts comes out as
// valid, canonical (idempotent) JSON with the same meaning.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `1e30`, `"\u20ac\ud83d\ude00"`, `{"a":1,"a":2}`, `-0.0`, `[9007199254740991]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			return
		}
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("Canonicalize(%q) = %q: not valid JSON", in, out)
		}
		// The JCS library Canonicalize used before jsontext is the oracle.
		if want, err := jcs.Transform(in); err != nil || string(want) != string(out) {
			t.Fatalf("Canonicalize(%q) = %q; the JCS library writes %q, %v", in, out, want, err)
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("encoding/json rejects accepted input %q", in)
		}
		if !reflect.DeepEqual(a, b) { // DeepEqual compares floats with ==, so -0 equals 0
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}

// FuzzHeaderPreimage checks the hand-written header encoder against the
// library for arbitrary field values.
func FuzzHeaderPreimage(f *testing.F) {
	f.Add(int64(0), "2025-01-06T09:00:00Z", "genesis", "ed25519:00")
	f.Add(int64(153), "\u2028", "\"\\\x01", "é😀")
	f.Fuzz(func(t *testing.T, index int64, ts, kind, writer string) {
		if index < 0 || index > maxSafeInteger || !utf8.ValidString(ts) || !utf8.ValidString(kind) || !utf8.ValidString(writer) {
			return
		}
		checkPreimage(t, Header{Index: index, Timestamp: ts, Kind: kind, Writer: KeyID(writer), PayloadHash: Hash{9}})
	})
}
