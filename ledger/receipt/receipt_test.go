package receipt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/receipt"
)

var update = flag.Bool("update", false, "rewrite testdata/")

// fixed keys and inputs, so the issued receipt is a stable vector.
func key(t testing.TB, seed byte) ledger.PrivateKey {
	t.Helper()
	k, err := ledger.NewPrivateKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	request  = []byte(`{"message": "Who is the Bridge?"}`)
	response = []byte(`{"node":"S5_LOCUS","provider":"offline","model":"grounded-retrieval-v1","reply":"…","receipt":{"ignored":true}}`)
	issuedAt = time.Date(2026, 11, 21, 10, 4, 5, 123456789, time.FixedZone("CET", 3600))
)

func issue(t testing.TB) (receipt.Receipt, []byte, receipt.Keyring) {
	t.Helper()
	reqHash, err := receipt.HashJSON(request)
	if err != nil {
		t.Fatal(err)
	}
	respHash, err := receipt.HashResponse(response)
	if err != nil {
		t.Fatal(err)
	}
	k := key(t, 1)
	r, err := receipt.Issue(receipt.Fields{Route: "/api/ember", Node: "S5_LOCUS", Provider: "offline", Model: "grounded-retrieval-v1",
		RequestSHA256: reqHash, ResponseSHA256: respHash}, k, issuedAt, bytes.NewReader(bytes.Repeat([]byte{0xab}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := receipt.NewKeyring(receipt.NodeKey{Node: "S5_LOCUS", Key: k.Public()}, receipt.NodeKey{Node: "S17_LUMEN", Key: key(t, 2).Public()})
	if err != nil {
		t.Fatal(err)
	}
	return r, data, kr
}

// TestIssueVector pins the exact bytes of a receipt made from fixed inputs
// (testdata/receipt.json): the documented form, in canonical JSON.
func TestIssueVector(t *testing.T) {
	r, data, kr := issue(t)
	if *update {
		if err := os.WriteFile("testdata/receipt.json", append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/receipt.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(data)+"\n" != string(want) {
		t.Errorf("receipt =\n%s\nwant\n%s", data, want)
	}
	if r.IssuedAt != "2026-11-21T09:04:05.123Z" || r.ReceiptID != strings.Repeat("ab", 16) || r.KeyID != string(key(t, 1).ID()) {
		t.Errorf("receipt %+v", r)
	}
	v, err := receipt.Verify(data, kr, receipt.Evidence{Request: request, Response: response})
	if err != nil {
		t.Fatal(err)
	}
	if v.Receipt != r || v.Key.ID() != key(t, 1).ID() {
		t.Errorf("verified %+v", v)
	}
}

func TestVerifyAcceptsAnyEncodingOfTheSameMembers(t *testing.T) {
	r, _, kr := issue(t)
	// Reordered, indented, with escapes: the same ten strings.
	var m map[string]string
	data, _ := r.JSON()
	json.Unmarshal(data, &m)
	pretty, _ := json.MarshalIndent(m, "", "   ")
	escaped := bytes.Replace(pretty, []byte(`"/api/ember"`), []byte(`"\/api\/ember"`), 1)
	for _, in := range [][]byte{pretty, escaped} {
		if _, err := receipt.Verify(in, kr, receipt.Evidence{}); err != nil {
			t.Errorf("Verify(%s) = %v", in, err)
		}
	}
	// The request may be sent in any JSON encoding of the same value.
	if _, err := receipt.Verify(data, kr, receipt.Evidence{Request: []byte("{\n \"message\" : \"Who is the \\u0042ridge?\"\n}")}); err != nil {
		t.Errorf("re-encoded request: %v", err)
	}
}

// TestEveryChangedByteFails changes each byte of a canonical receipt to
// several other values: no changed receipt verifies, and each failure is a
// typed *Error.
func TestEveryChangedByteFails(t *testing.T) {
	_, data, kr := issue(t)
	tried := 0
	for i := range data {
		for _, b := range []byte{'0', '1', 'a', 'f', 'A', ' ', '"', '\\', '{', 0xff, data[i] ^ 0x01, data[i] ^ 0x20} {
			if b == data[i] {
				continue
			}
			changed := bytes.Clone(data)
			changed[i] = b
			tried++
			_, err := receipt.Verify(changed, kr, receipt.Evidence{})
			var re *receipt.Error
			if err == nil {
				t.Fatalf("byte %d (%q) changed to %q still verifies: %s", i, data[i], b, changed)
			}
			if !errors.As(err, &re) {
				t.Fatalf("byte %d: error %v is not a *receipt.Error", i, err)
			}
		}
	}
	t.Logf("%d changed receipts, none verified", tried)
}

func TestVerifyNamesWhatFailed(t *testing.T) {
	r, data, kr := issue(t)
	other := key(t, 3)
	resign := func(mod func(*receipt.Receipt), k ledger.PrivateKey) []byte {
		c := r
		mod(&c)
		issued, err := receipt.Issue(receipt.Fields{Route: c.Route, Node: c.Node, Provider: c.Provider, Model: c.Model,
			RequestSHA256: c.RequestSHA256, ResponseSHA256: c.ResponseSHA256}, k, issuedAt, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := issued.JSON()
		return out
	}
	set := func(field string, value any) []byte {
		var m map[string]any
		json.Unmarshal(data, &m)
		if value == nil {
			delete(m, field)
		} else {
			m[field] = value
		}
		out, _ := json.Marshal(m)
		return out
	}
	swap := func(field, value string) []byte { return set(field, value) }
	for _, tc := range []struct {
		desc  string
		data  []byte
		ev    receipt.Evidence
		is    error
		field string
	}{
		{"not JSON", []byte("receipt"), receipt.Evidence{}, receipt.ErrMalformed, ""},
		{"an array", []byte(`[]`), receipt.Evidence{}, receipt.ErrMalformed, ""},
		{"duplicate member", append(bytes.TrimSuffix(bytes.Clone(data), []byte("}")), []byte(`,"node":"S5_LOCUS"}`)...), receipt.Evidence{}, receipt.ErrMalformed, ""},
		{"missing member", set("model", nil), receipt.Evidence{}, receipt.ErrMalformed, "model"},
		{"unknown member", set("session_context", "admin"), receipt.Evidence{}, receipt.ErrMalformed, "session_context"},
		{"member differing in case", bytes.Replace(data, []byte(`"node"`), []byte(`"Node"`), 1), receipt.Evidence{}, receipt.ErrMalformed, "node"},
		{"number instead of string", set("route", 7), receipt.Evidence{}, receipt.ErrMalformed, "route"},
		{"null", set("route", json.RawMessage("null")), receipt.Evidence{}, receipt.ErrMalformed, "route"},
		{"uppercase signature", swap("signature", strings.ToUpper(r.Signature)), receipt.Evidence{}, receipt.ErrMalformed, "signature"},
		{"short hash", swap("request_sha256", r.RequestSHA256[:63]), receipt.Evidence{}, receipt.ErrMalformed, "request_sha256"},
		{"local time", swap("issued_at", "2026-11-21T10:04:05.123+01:00"), receipt.Evidence{}, receipt.ErrMalformed, "issued_at"},
		{"time without milliseconds", swap("issued_at", "2026-11-21T09:04:05Z"), receipt.Evidence{}, receipt.ErrMalformed, "issued_at"},
		{"control character in model", swap("model", "m\u0007"), receipt.Evidence{}, receipt.ErrMalformed, "model"},
		{"changed model", swap("model", "gpt-5"), receipt.Evidence{}, receipt.ErrSignature, "signature"},
		{"changed time", swap("issued_at", "2026-11-21T09:04:05.124Z"), receipt.Evidence{}, receipt.ErrSignature, "signature"},
		{"changed response hash", swap("response_sha256", strings.Repeat("0", 64)), receipt.Evidence{}, receipt.ErrSignature, "signature"},
		{"signature of another receipt", swap("signature", func() string {
			var m map[string]string
			json.Unmarshal(resign(func(c *receipt.Receipt) { c.Model = "x" }, key(t, 1)), &m)
			return m["signature"]
		}()), receipt.Evidence{}, receipt.ErrSignature, "signature"},
		{"unpinned key", resign(func(*receipt.Receipt) {}, other), receipt.Evidence{}, receipt.ErrUnknownKey, "key_id"},
		{"key of another node", swap("node", "S17_LUMEN"), receipt.Evidence{}, receipt.ErrWrongNode, "node"},
		{"signed by Lumen's key for Ember", resign(func(*receipt.Receipt) {}, key(t, 2)), receipt.Evidence{}, receipt.ErrWrongNode, "node"},
		{"another request", data, receipt.Evidence{Request: []byte(`{"message":"Who is the Bridge!"}`)}, receipt.ErrRequestMismatch, "request_sha256"},
		{"another response", data, receipt.Evidence{Response: bytes.Replace(response, []byte("…"), []byte("..."), 1)}, receipt.ErrResponseMismatch, "response_sha256"},
		{"request not JSON", data, receipt.Evidence{Request: []byte(`{"message":`)}, receipt.ErrMalformed, "request"},
		{"response not an object", data, receipt.Evidence{Response: []byte(`"text"`)}, receipt.ErrMalformed, "response"},
	} {
		_, err := receipt.Verify(tc.data, kr, tc.ev)
		var re *receipt.Error
		if !errors.Is(err, tc.is) || !errors.As(err, &re) || re.Field != tc.field {
			t.Errorf("%s: %v, want %v naming %q", tc.desc, err, tc.is, tc.field)
		}
	}
	if _, err := receipt.Verify(data, receipt.Keyring{}, receipt.Evidence{}); !errors.Is(err, receipt.ErrUnknownKey) {
		t.Errorf("empty keyring: %v", err)
	}
}

func TestIssueRefusesBadFields(t *testing.T) {
	h := strings.Repeat("0", 64)
	good := receipt.Fields{Route: "/api/chat", Node: "S2_CASE", Provider: "openai", Model: "gpt-4o-mini", RequestSHA256: h, ResponseSHA256: h}
	for _, mod := range []func(*receipt.Fields){
		func(f *receipt.Fields) { f.Route = "api/chat" },
		func(f *receipt.Fields) { f.Node = "s2_case" },
		func(f *receipt.Fields) { f.Provider = "" },
		func(f *receipt.Fields) { f.Model = strings.Repeat("m", 201) },
		func(f *receipt.Fields) { f.RequestSHA256 = "abc" },
		func(f *receipt.Fields) { f.ResponseSHA256 = strings.ToUpper(strings.Repeat("a", 64)) },
	} {
		f := good
		mod(&f)
		if _, err := receipt.Issue(f, key(t, 1), issuedAt, nil); !errors.Is(err, receipt.ErrMalformed) {
			t.Errorf("Issue(%+v) = %v, want ErrMalformed", f, err)
		}
	}
	if _, err := receipt.Issue(good, key(t, 1), issuedAt, nil); err != nil {
		t.Error(err)
	}
}

func TestNewKeyring(t *testing.T) {
	k := key(t, 1).Public()
	for _, keys := range [][]receipt.NodeKey{
		{{Node: "S5_LOCUS"}},
		{{Node: "ember", Key: k}},
		{{Node: "S5_LOCUS", Key: k}, {Node: "S17_LUMEN", Key: k}},
	} {
		if _, err := receipt.NewKeyring(keys...); err == nil {
			t.Errorf("NewKeyring(%v) accepted it", keys)
		}
	}
}

// KeyringOf pins the node keys of a published list (a trust document's
// keys) for the node each names, and only those.
func TestKeyringOf(t *testing.T) {
	_, data, _ := issue(t)
	writer := key(t, 3).Public()
	published := []ledger.PublishedKey{ledger.Publish(writer, ledger.RoleWriter), ledger.PublishNode(key(t, 1).Public(), "S5_LOCUS")}
	kr, err := receipt.KeyringOf(published)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(data, kr, receipt.Evidence{}); err != nil {
		t.Errorf("Verify with the published node key: %v", err)
	}
	published[1].Node = "S17_LUMEN"
	kr, _ = receipt.KeyringOf(published)
	if _, err := receipt.Verify(data, kr, receipt.Evidence{}); !errors.Is(err, receipt.ErrWrongNode) {
		t.Errorf("the key pinned for another node: %v, want ErrWrongNode", err)
	}
	published[1].KeyID = writer.ID()
	if _, err := receipt.KeyringOf(published); err == nil {
		t.Error("a key_id that is not the key's was pinned")
	}
}

func FuzzVerify(f *testing.F) {
	_, data, kr := issue(f)
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := receipt.Verify(in, kr, receipt.Evidence{})
		if err == nil && !bytes.Equal(in, data) {
			// Only the same ten strings may verify.
			want, _ := receipt.Verify(data, kr, receipt.Evidence{})
			if v.Receipt != want.Receipt {
				t.Fatalf("verified a different receipt: %s", in)
			}
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	_, data, kr := issue(b)
	for b.Loop() {
		if _, err := receipt.Verify(data, kr, receipt.Evidence{Request: request, Response: response}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssue(b *testing.B) {
	k := key(b, 1)
	h := strings.Repeat("0", 64)
	f := receipt.Fields{Route: "/api/chat", Node: "S2_CASE", Provider: "openai", Model: "gpt-4o-mini", RequestSHA256: h, ResponseSHA256: h}
	for b.Loop() {
		if _, err := receipt.Issue(f, k, issuedAt, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPayload: the payload and the receipt written directly are the RFC
// 8785 forms ledger.MarshalCanonical gives, whatever the members hold.
func FuzzPayload(f *testing.F) {
	for _, s := range []string{"gpt-4o-mini", `a "quoted" \ model`, "tab\there\nnewline\x01\x1f", "é ü ✓ 😀 \u2028\u2029 <&>", "\x7f\u0080\uffff"} {
		f.Add(s, "/api/chat")
	}
	f.Fuzz(func(t *testing.T, model, route string) {
		r := receipt.Receipt{ReceiptID: "0123", Route: route, Node: "S2_CASE", Provider: "openai", Model: model,
			RequestSHA256: "aa", ResponseSHA256: "bb", IssuedAt: "2026-11-21T10:04:05.123Z"}
		got, err := r.Payload()
		want, werr := ledger.MarshalCanonical(map[string]string{
			"receipt_id": r.ReceiptID, "route": r.Route, "node": r.Node, "provider": r.Provider, "model": r.Model,
			"request_sha256": r.RequestSHA256, "response_sha256": r.ResponseSHA256, "issued_at": r.IssuedAt,
		})
		if !utf8.ValidString(model) || !utf8.ValidString(route) {
			if err == nil {
				t.Fatalf("invalid UTF-8 accepted: %q %q", model, route)
			}
			return
		}
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("Payload = %s (%v)\nwant      %s (%v)", got, err, want, werr)
		}
		r.KeyID, r.Signature = "ed25519:"+model, route
		got, err = r.JSON()
		want, werr = ledger.MarshalCanonical(r)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("JSON = %s (%v)\nwant   %s (%v)", got, err, want, werr)
		}
	})
}
