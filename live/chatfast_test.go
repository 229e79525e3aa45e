package live

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger/receipt"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
)

// fastCase is one request to a route with a fast path (POST /api/chat,
// POST /api/v1/evaluate).
type fastCase struct {
	desc, body, query string
	header            []string
	fast              bool // the fast path takes it
}

// The fast path of POST /api/chat answers what huma's operation answers:
// the same status, headers and body (receipt and generated_at aside), the
// same refusals, the same rate; and what it does not take reaches huma.
func TestChatFastPathAnswersAsHuma(t *testing.T) {
	long := strings.Repeat("é", ai.MaxTextRunes)
	cases := []fastCase{
		{desc: "plain", body: `{"message":"Is session context treated as authority on the airlock?"}`, fast: true},
		{desc: "accept any", body: `{"message":"Is session context treated as authority?"}`, header: []string{"Accept", "*/*"}, fast: true},
		{desc: "accept json", body: `{"message":"hello"}`, header: []string{"Accept", "application/json"}, fast: true},
		{desc: "node", body: `{"message":"hello","node":"S1_PLEX"}`, fast: true},
		{desc: "unicode", body: `{"message":"héllo ✓ <&> ` + "\u2028" + ` the ledger"}`, fast: true},
		{desc: "delete character", body: `{"message":"hi ` + "\u007f" + `"}`, fast: true}, // the node refuses it
		{desc: "longest", body: `{"message":"` + long + `"}`, fast: true},
		{desc: "white space only", body: `{"message":"   "}`, fast: true},                                             // the node refuses it
		{desc: "invalid UTF-8", body: `{"message":"a` + "\xff" + `"}`, fast: true},                                    // the pipeline refuses it
		{desc: "media type", body: `{"message":"hello"}`, header: []string{"Content-Type", "text/plain"}, fast: true}, // 415
		{desc: "escape", body: `{"message":"say \"hello\""}`},
		{desc: "order", body: `{"node":"S1_PLEX","message":"hello"}`},
		{desc: "space", body: `{"message": "hello"}`},
		{desc: "too long", body: `{"message":"` + long + `é"}`},
		{desc: "empty", body: `{"message":""}`},
		{desc: "empty node", body: `{"message":"hi","node":""}`},
		{desc: "airlock node", body: `{"message":"hi","node":"S5_LOCUS"}`},
		{desc: "node case", body: `{"message":"hi","node":"s1_plex"}`},
		{desc: "unknown member", body: `{"message":"hi","session":"s"}`},
		{desc: "trailing", body: `{"message":"hi"} `},
		{desc: "control", body: "{\"message\":\"hi\x07\"}"},
		{desc: "not JSON", body: `message=hi`},
		{desc: "query", body: `{"message":"hello"}`, query: "?node=S1_PLEX"},
		{desc: "accept other", body: `{"message":"hello"}`, header: []string{"Accept", "application/cbor"}},
		{desc: "over the rate", body: `{"message":"hello"}`, fast: true}, // the limit below is the cases' count
	}
	limit := map[string]Limit{"/api/chat": {Max: len(cases) - 1, Window: time.Hour}}
	fast, huma := startAIServer(t, aiSetup{limits: limit}), startAIServer(t, aiSetup{limits: limit})
	huma.srv.ai.fast.off = true
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) { compareChat(t, fast, huma, tc) })
	}
	if last := cases[len(cases)-1]; !strings.Contains(last.desc, "rate") {
		t.Fatal("the last case is not the one over the rate")
	}
	if n := int64(len(slices.DeleteFunc(slices.Clone(cases), func(c fastCase) bool { return !c.fast }))); fast.srv.ai.fast.taken.Load() != n {
		t.Errorf("the fast path took %d requests, want %d", fast.srv.ai.fast.taken.Load(), n)
	}
	if huma.srv.ai.fast.taken.Load() != 0 {
		t.Error("the fast path answered while off")
	}
}

// A provider's failure is the same problem on both paths.
func TestChatFastPathProviderFailure(t *testing.T) {
	w := sdkWires[1]
	start := func() *aiServer {
		return startAIServer(t, w.setup(w.start(t, aitest.Script{Status: 500, ErrorBody: `{"error":{"message":"no"}}`}), 5*time.Second))
	}
	fast, huma := start(), start()
	huma.srv.ai.fast.off = true
	compareChat(t, fast, huma, fastCase{body: `{"message":"hi"}`, fast: true})
	if fast.srv.ai.fast.taken.Load() != 1 {
		t.Error("the fast path did not take the request")
	}
}

// volatile are the members that differ between two answers to one
// request: when, the receipt's id, key and signature, and the hash of the
// answer, which holds generated_at.
var volatile = regexp.MustCompile(`"(generated_at|issued_at|receipt_id|key_id|signature|response_sha256)":"[^"]*"`)

// compareChat sends tc to both servers and compares the answers.
func compareChat(t *testing.T, fast, huma *aiServer, tc fastCase) {
	t.Helper()
	var got [2]*http.Response
	var bodies [2][]byte
	for i, s := range []*aiServer{fast, huma} {
		got[i], bodies[i] = post(t, s.main, "/api/chat"+tc.query, tc.body, tc.header...)
		if got[i].StatusCode == http.StatusOK {
			s.answerOf(t, got[i], bodies[i], tc.body) // its receipt verifies
		}
		if n := got[i].Header.Get("Content-Length"); n != fmt.Sprint(len(bodies[i])) {
			t.Errorf("Content-Length %s for %d bytes", n, len(bodies[i]))
		}
		got[i].Header.Del("Date")
		got[i].Header.Del("Content-Length") // generated_at's length varies
	}
	if got[0].StatusCode != got[1].StatusCode || !equalHeaders(got[0].Header, got[1].Header) {
		t.Errorf("fast path %d %v\nhuma      %d %v", got[0].StatusCode, got[0].Header, got[1].StatusCode, got[1].Header)
	}
	a, b := volatile.ReplaceAll(bodies[0], []byte(`"$1":""`)), volatile.ReplaceAll(bodies[1], []byte(`"$1":""`))
	if !bytes.Equal(a, b) {
		t.Errorf("fast path %s\nhuma      %s", a, b)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if k == "Retry-After" && closeSeconds(v, b[k]) {
			continue
		}
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// closeSeconds reports whether two Retry-After values are whole seconds at
// most one apart: the two servers' rate windows open a moment apart, so a
// request on each may fall either side of a second's boundary.
func closeSeconds(a, b []string) bool {
	if len(a) != 1 || len(b) != 1 {
		return false
	}
	x, errX := strconv.Atoi(a[0])
	y, errY := strconv.Atoi(b[0])
	return errX == nil && errY == nil && x-y <= 1 && y-x <= 1
}

// A body the fast path takes is its own RFC 8785 canonical form, so its
// SHA-256 is request_sha256; any other is left to huma.
func TestChatFastBodyIsCanonical(t *testing.T) {
	for _, body := range []string{
		`{"message":"hi"}`, `{"message":"hi","node":"S1_PLEX"}`, `{"message":"héllo ✓ <&> ` + "\u2028\u2029\u007f\U0001F600" + `"}`,
		`{"message":"` + "\u00e9\u0301" + `","node":""}`, `{"message":"/\/"}`, `{"message":"a\"b"}`, `{"message":"a\nb"}`,
		"{\"message\":\"a\tb\"}", `{"message":"\u0041"}`, `{"message":"hi"} `, ` {"message":"hi"}`, `{"message":"hi","node":"S1_PLEX","x":""}`,
		`{"node":"S1_PLEX","message":"hi"}`, `{"message":"hi",}`, `{"message":"hi"`, `{"message":1}`, `{"message":"hi","node":1}`,
		`{"message":"hi","node":"x"}}`, `{"message":""}`, `{"message":"1e2"}`,
	} {
		message, node, ok := canonicalChatBody([]byte(body))
		want, err := receipt.HashJSON([]byte(body))
		if !ok {
			continue
		}
		sum := sha256.Sum256([]byte(body))
		if err != nil || hex.EncodeToString(sum[:]) != want {
			t.Errorf("%s: taken (message %q, node %q), but its canonical hash is %s (%v)", body, message, node, want, err)
		}
	}
	// What it takes, it reads right.
	message, node, ok := canonicalChatBody([]byte(`{"message":"héllo","node":"S1_PLEX"}`))
	if !ok || string(message) != "héllo" || string(node) != "S1_PLEX" {
		t.Errorf("%q %q %v", message, node, ok)
	}
	if _, node, ok := canonicalChatBody([]byte(`{"message":"hi"}`)); !ok || node != nil {
		t.Errorf("no node: %q %v", node, ok)
	}
}

// FuzzChatFastBody: whatever body the fast path takes is canonical JSON.
func FuzzChatFastBody(f *testing.F) {
	f.Add(`{"message":"hi","node":"S1_PLEX"}`)
	f.Add(`{"message":"héllo ✓"}`)
	f.Fuzz(func(t *testing.T, body string) {
		if _, _, ok := canonicalChatBody([]byte(body)); !ok {
			return
		}
		want, err := receipt.HashJSON([]byte(body))
		if err != nil {
			return // not JSON (invalid UTF-8): the pipeline refuses it before it is hashed
		}
		if sum := sha256.Sum256([]byte(body)); hex.EncodeToString(sum[:]) != want {
			t.Errorf("%q is taken but is not canonical", body)
		}
	})
}
