package live

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/live/memory/dual"
	"github.com/proofsite/proofsite/live/towns"
)

// echoResponder answers with what it was given.
type echoResponder struct{}

func (echoResponder) Reply(_ context.Context, designation string, q towns.Question) (towns.Reply, error) {
	return towns.Reply{Node: designation, Provider: "offline", Model: "echo",
		Text: fmt.Sprintf("%s heard %q with memory %q", designation, q.Message, q.Memory)}, nil
}

// openTestTowns opens the towns of the test site in dir, answered by r;
// they are closed when the test ends (or earlier by the test).
func openTestTowns(t testing.TB, l testLedger, mem *dual.Store, dir string, r towns.Responder) *towns.Towns {
	t.Helper()
	ch := testSite().Charter
	tw, err := towns.Open(context.Background(), dir, towns.Options{Charter: &ch, Chain: l, Memory: mem, Responder: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	return tw
}

// townServer is a live edge with real towns, memory and chain on
// 127.0.0.1, its data in dir.
type townServer struct {
	client
	ledger testLedger
	memory *dual.Store
	towns  *towns.Towns
}

// startTownServer starts a town server answered by r (echoResponder when
// nil).
func startTownServer(t *testing.T, dir string, l testLedger, limits map[string]Limit, r towns.Responder) *townServer {
	t.Helper()
	if r == nil {
		r = echoResponder{}
	}
	mem := openTestMemory(t, l, filepath.Join(dir, "memory"), dual.Options{})
	tw := openTestTowns(t, l, mem, filepath.Join(dir, "towns"), r)
	srv := newTestServer(t, Options{Chain: l, Memory: mem, MemoryTokens: testTokens(t), Towns: tw, Limits: limits})
	return &townServer{client: client{t, serveLoopback(t, srv)}, ledger: l, memory: mem, towns: tw}
}

func (ts *townServer) town(id string) TownDetail {
	var d TownDetail
	ts.json(http.MethodGet, "/api/v1/towns/"+id, "", 200, &d)
	return d
}

// requireRow checks a witness against the public strict table, as anyone
// would: the row at its index has its hash and prev_hash and commits to
// payload.
func (ts *townServer) requireRow(w towns.Witness, payload []byte) {
	ts.t.Helper()
	var table struct {
		Rows []struct {
			Index       int64       `json:"index"`
			Hash        ledger.Hash `json:"hash"`
			PrevHash    ledger.Hash `json:"prev_hash"`
			PayloadHash ledger.Hash `json:"payload_hash"`
		} `json:"rows"`
	}
	ts.json(http.MethodGet, "/api/ledger/strict-table", "", 200, &table)
	if int64(len(table.Rows)) <= w.BlockIndex {
		ts.t.Fatalf("the table has %d rows, the witness names %d", len(table.Rows), w.BlockIndex)
	}
	row := table.Rows[w.BlockIndex]
	if row.Index != w.BlockIndex || row.Hash != w.BlockHash || row.PrevHash != w.PrevHash || row.PayloadHash != w.PayloadHash ||
		sha256.Sum256(payload) != row.PayloadHash {
		ts.t.Fatalf("row %+v does not witness %+v with payload %s", row, w, payload)
	}
}

func TestTownRoutes(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	signLimit := Limit{Max: 12, Window: time.Hour}
	ts := startTownServer(t, dir, l, map[string]Limit{"/api/v1/towns/{id}/sign": signLimit}, nil)

	var list TownList
	ts.json(http.MethodGet, "/api/v1/towns", "", 200, &list)
	if list.LiveTowns != 2 || list.RosterSize != 4 || list.Towns[0].ID != "plex" || list.Towns[0].Status != "live" ||
		list.Towns[0].Node.Designation != "S1_PLEX" || list.Towns[0].WallSignatures != 9 || list.Towns[1].ID != "case" {
		t.Fatalf("towns: %+v", list)
	}
	for _, path := range []string{"/api/v1/towns/vega", "/api/v1/towns/PLEX", "/api/v1/towns/vega/wall"} {
		resp, b := ts.do(http.MethodGet, path, "")
		problemOf(t, resp, b, 404, "not-found")
	}

	t.Run("visitors are counted once a day", func(t *testing.T) {
		ts.town("case")
		ts.town("case")
		if d := ts.town("case"); d.Visitors != 1 || d.VisitorsToday != 1 {
			t.Fatalf("case: %+v", d.Status)
		}
	})

	var sig Signed
	t.Run("sign", func(t *testing.T) {
		blocks := l.Count()
		ts.json(http.MethodPost, "/api/v1/towns/plex/sign", `{"signer":"Ada","message":"Checked the seam at 153 myself."}`, 201, &sig)
		s := sig.Signature
		if s.Signer != "Ada" || s.Town != "plex" || l.Count() != blocks+1 || s.Witness.BlockIndex != blocks {
			t.Fatalf("signed: %+v", s)
		}
		ts.requireRow(s.Witness, s.Payload)
		var w Wall
		ts.json(http.MethodGet, "/api/v1/towns/plex/wall?limit=2", "", 200, &w)
		if w.Total != 10 || len(w.Signatures) != 2 || w.Signatures[0].Witness != s.Witness || w.Signatures[1].Signer != "" {
			t.Fatalf("wall: %+v", w)
		}
		var older Wall
		ts.json(http.MethodGet, fmt.Sprintf("/api/v1/towns/plex/wall?limit=1&before=%d", w.Signatures[1].Witness.BlockIndex), "", 200, &older)
		if len(older.Signatures) != 1 || older.Signatures[0].Witness.BlockIndex >= w.Signatures[1].Witness.BlockIndex {
			t.Fatalf("the next page: %+v", older)
		}
	})

	t.Run("refused signatures write nothing", func(t *testing.T) {
		blocks, total := l.Count(), ts.town("plex").WallSignatures
		for _, tc := range []struct {
			desc, body, slug, field string
		}{
			{"bidirectional override", `{"signer":"Ada\u202e","message":"hello"}`, "invalid-request", "body.signer"},
			{"isolate in the message", `{"signer":"Ada","message":"\u2066hidden\u2069"}`, "invalid-request", "body.message"},
			{"newline", `{"signer":"Ada","message":"two\nlines"}`, "invalid-request", "body.message"},
			{"escape", `{"signer":"\u001b[2J","message":"hello"}`, "invalid-request", "body.signer"},
			{"blank", `{"signer":"   ","message":"hello"}`, "invalid-request", "body.signer"},
			{"too long", `{"signer":"Ada","message":"` + strings.Repeat("é", 281) + `"}`, "invalid-request", "body.message"},
			{"missing", `{"signer":"Ada"}`, "invalid-request", "body"},
			{"unknown member", `{"signer":"Ada","message":"hello","town":"case"}`, "unknown-member", "body"},
		} {
			t.Run(tc.desc, func(t *testing.T) {
				resp, b := ts.do(http.MethodPost, "/api/v1/towns/plex/sign", tc.body)
				problemOf(t, resp, b, 400, tc.slug)
				if !strings.Contains(string(b), `"location":"`+tc.field+`"`) {
					t.Errorf("the problem does not name %s: %s", tc.field, b)
				}
				if l.Count() != blocks || ts.town("plex").WallSignatures != total {
					t.Fatal("a refused signature was written")
				}
			})
		}
		resp, b := ts.do(http.MethodPost, "/api/v1/towns/vega/sign", `{"signer":"Ada","message":"hello"}`)
		problemOf(t, resp, b, 404, "not-found")
	})

	t.Run("signing is limited per client", func(t *testing.T) {
		// The refusals above counted against the budget too.
		for i := range signLimit.Max {
			blocks := l.Count()
			resp, b := ts.do(http.MethodPost, "/api/v1/towns/plex/sign", fmt.Sprintf(`{"signer":"Ada","message":"again %d"}`, i))
			if resp.StatusCode == 201 {
				continue
			}
			problemOf(t, resp, b, 429, "rate-limited")
			if resp.Header.Get("Retry-After") == "" || l.Count() != blocks {
				t.Fatalf("Retry-After %q; %d blocks, had %d", resp.Header.Get("Retry-After"), l.Count(), blocks)
			}
			return
		}
		t.Fatalf("%d signatures were accepted from one client", signLimit.Max)
	})

	t.Run("chat with the town's memory", func(t *testing.T) {
		if _, err := ts.memory.Put(context.Background(), memory.Draft{NodeID: "plex", Content: json.RawMessage(`"Plex plans the week."`)}); err != nil {
			t.Fatal(err)
		}
		var c TownChat
		ts.json(http.MethodPost, "/api/v1/towns/plex/chat", `{"message":"What do you plan?"}`, 200, &c)
		if c.Reply.Node != "S1_PLEX" || c.MemoriesGiven != 1 || !strings.Contains(c.Reply.Text, "Plex plans the week.") || c.Message.Message != "What do you plan?" {
			t.Fatalf("chat: %+v", c)
		}
		if d := ts.town("plex"); d.Messages != 1 || len(d.RecentMessages) != 1 || d.RecentMessages[0].Reply.Text != c.Reply.Text {
			t.Fatalf("plex after the chat: %+v", d)
		}
		resp, b := ts.do(http.MethodPost, "/api/v1/towns/plex/chat", `{"message":"\u202eevil"}`)
		problemOf(t, resp, b, 400, "invalid-request")
		if d := ts.town("plex"); d.Messages != 1 {
			t.Fatal("a refused message was kept")
		}
	})

	t.Run("inter-node exchanges are witnessed", func(t *testing.T) {
		blocks := l.Count()
		payload := "Could you give block 153 a second reading?"
		var x InterNode
		ts.json(http.MethodPost, "/api/v1/towns/plex/inter-node", `{"to":"case","payload":"`+payload+`"}`, 201, &x)
		if x.From != "plex" || x.To != "case" || x.Response.Node != "S2_CASE" || x.PayloadHash != sha256.Sum256([]byte(payload)) ||
			x.ResponseHash != sha256.Sum256([]byte(x.Response.Text)) || l.Count() != blocks+1 {
			t.Fatalf("exchange: %+v", x)
		}
		var record struct {
			From, To, RequestID string
		}
		json.Unmarshal(x.Record, &record)
		if record.From != "s1" || record.To != "s2" || !strings.Contains(string(x.Record), x.RequestID) {
			t.Fatalf("record: %s", x.Record)
		}
		ts.requireRow(x.Witness, x.Record)
		for body, want := range map[string]string{
			`{"to":"plex","payload":"myself"}`: "body.to",
			`{"to":"vega","payload":"nobody"}`: "body.to",
			`{"to":"case","payload":""}`:       "body.payload",
		} {
			resp, b := ts.do(http.MethodPost, "/api/v1/towns/plex/inter-node", body)
			problemOf(t, resp, b, 400, "invalid-request")
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: %s", body, b)
			}
		}
		if l.Count() != blocks+1 {
			t.Fatal("a refused exchange was recorded")
		}
	})
}

// TestTownsSurviveRestart signs and chats through the routes, stops
// everything, and finds the wall, the messages and the visitors on a new
// server over the same data folder.
func TestTownsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	ts := startTownServer(t, dir, l, nil, nil)
	var sig Signed
	ts.json(http.MethodPost, "/api/v1/towns/case/sign", `{"signer":"Grace","message":"Still here after a restart."}`, 201, &sig)
	ts.json(http.MethodPost, "/api/v1/towns/case/chat", `{"message":"Remember me?"}`, 200, nil)
	ts.towns.Close()
	ts.memory.Close()

	again := startTownServer(t, dir, l, nil, nil)
	d := again.town("case")
	// The day's salt lives in memory only: after a restart the same client
	// is a new visitor.
	if d.Messages != 1 || len(d.RecentMessages) != 1 || d.RecentMessages[0].Message != "Remember me?" || d.Visitors != 2 || d.VisitorsToday != 1 {
		t.Fatalf("case after the restart: %+v", d)
	}
	var w Wall
	again.json(http.MethodGet, "/api/v1/towns/case/wall?limit=1", "", 200, &w)
	if len(w.Signatures) != 1 || w.Signatures[0].Witness != sig.Signature.Witness || w.Signatures[0].Message != "Still here after a restart." {
		t.Fatalf("wall after the restart: %+v", w)
	}
	again.requireRow(w.Signatures[0].Witness, w.Signatures[0].Payload)
}
