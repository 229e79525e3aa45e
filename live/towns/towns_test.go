package towns

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// TestHistoryWalls: the walls start with the published history's
// signatures, each shown with the payload its block commits to.
func TestHistoryWalls(t *testing.T) {
	e := newEnv(t)
	tw := e.open(t)
	want := historyWalls()
	for _, st := range tw.List() {
		if st.WallSignatures != want[st.ID] || st.Status != "live" || st.Node.Town != st.ID || st.MemoryNode != st.ID {
			t.Errorf("%s: %+v, want %d signatures", st.ID, st, want[st.ID])
		}
	}
	wall, err := tw.Wall(context.Background(), "tars", 0, 0)
	if err != nil || int64(len(wall)) != want["tars"] {
		t.Fatalf("tars wall: %d signatures, %v", len(wall), err)
	}
	for i, s := range wall {
		requireWitnessed(t, e.ledger, s.Witness, s.Payload)
		if i > 0 && s.Witness.BlockIndex >= wall[i-1].Witness.BlockIndex {
			t.Fatal("the wall is not newest first")
		}
		if s.Signer != "" || !strings.Contains(string(s.Payload), `"signature_hash":`) {
			t.Errorf("history signature %d: %+v", s.Witness.BlockIndex, s)
		}
	}
}

// requireWitnessed checks a witness against the chain: the block at its
// index has its hash and prev_hash, and commits to payload.
func requireWitnessed(t *testing.T, l testLedger, w Witness, payload []byte) {
	t.Helper()
	b, err := l.BlockByIndex(w.BlockIndex)
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash() != w.BlockHash || b.PrevHash() != w.PrevHash || b.Header().PayloadHash != w.PayloadHash || w.PayloadHash != sha256.Sum256(payload) {
		t.Fatalf("witness %+v does not match block %d (%s) or the payload %s", w, b.Index(), b.Hash(), payload)
	}
}

// requireVerifies walks the whole chain as a verifier does.
func requireVerifies(t *testing.T, l testLedger) {
	t.Helper()
	res, err := ledger.Verify(l.Range(context.Background(), 0, -1), ledger.Options{Keys: testSigners.KeySet(), Seams: ledgerOptions().Seams})
	if err != nil || !res.Verdict.Pass() {
		t.Fatalf("the chain does not verify: %s, %v", res.Verdict.Verdict, err)
	}
}

func TestSign(t *testing.T) {
	e := newEnv(t)
	tw := e.open(t)
	ctx := context.Background()
	before, _ := tw.Town("case")

	sig, err := tw.Sign(ctx, "case", SignatureDraft{Signer: "  Ada Lovelace ", Message: "Was here, and checked block 153. 👩‍💻 ünïcode"})
	if err != nil {
		t.Fatal(err)
	}
	if sig.Signer != "Ada Lovelace" || sig.Town != "case" || string(sig.Payload) != `{"message":"Was here, and checked block 153. 👩‍💻 ünïcode","permanent":true,"signer":"Ada Lovelace","town":"case"}` {
		t.Fatalf("signature: %+v %s", sig, sig.Payload)
	}
	if head := e.ledger.Head(); head.Index() != sig.Witness.BlockIndex || head.Header().Kind != KindWallSignature || head.Header().Timestamp != sig.SignedAt {
		t.Fatalf("the signature is not the chain's head: %+v", sig.Witness)
	}
	requireWitnessed(t, e.ledger, sig.Witness, sig.Payload)
	requireVerifies(t, e.ledger)
	wall, _ := tw.Wall(ctx, "case", 0, 1)
	if after, _ := tw.Town("case"); after.WallSignatures != before.WallSignatures+1 || len(wall) != 1 || wall[0].Witness != sig.Witness || wall[0].Message != sig.Message {
		t.Fatalf("wall after signing: %d signatures, newest %+v", after.WallSignatures, wall)
	}
	if _, err := tw.Sign(ctx, "vega", SignatureDraft{Signer: "a", Message: "b"}); !errors.Is(err, ErrUnknownTown) {
		t.Fatalf("unknown town: %v", err)
	}
}

func TestSignRefusesWithoutWriting(t *testing.T) {
	e := newEnv(t)
	tw := e.open(t)
	blocks := e.ledger.Count()
	for _, tc := range []struct {
		desc          string
		draft         SignatureDraft
		field, reason string
	}{
		{"empty signer", SignatureDraft{"", "hello"}, "signer", "is empty"},
		{"blank message", SignatureDraft{"Ada", " \u00a0 "}, "message", "is empty"},
		{"long signer", SignatureDraft{strings.Repeat("é", MaxSignerRunes+1), "hello"}, "signer", "has 65 characters"},
		{"long message", SignatureDraft{"Ada", strings.Repeat("x", MaxSignatureRunes+1)}, "message", "has 281 characters"},
		{"right-to-left override", SignatureDraft{"Ada\u202egnp.exe", "hello"}, "signer", "U+202E"},
		{"right-to-left isolate", SignatureDraft{"Ada", "hi \u2067there"}, "message", "U+2067"},
		{"left-to-right mark", SignatureDraft{"Ada\u200e", "hello"}, "signer", "U+200E"},
		{"arabic letter mark", SignatureDraft{"Ada", "a\u061cb"}, "message", "U+061C"},
		{"newline", SignatureDraft{"Ada", "line\nbreak"}, "message", "control character U+000A"},
		{"escape", SignatureDraft{"Ada\x1b[31m", "hello"}, "signer", "control character U+001B"},
		{"C1 control", SignatureDraft{"Ada", "a\u0085b"}, "message", "control character U+0085"},
		{"line separator", SignatureDraft{"Ada", "a\u2028b"}, "message", "separator U+2028"},
		{"invalid UTF-8", SignatureDraft{"Ada\xff", "hello"}, "signer", "not valid UTF-8"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := tw.Sign(context.Background(), "plex", tc.draft)
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.reason) {
				t.Fatalf("err = %v, want %s: %s", err, tc.field, tc.reason)
			}
			if e.ledger.Count() != blocks {
				t.Fatal("a refused signature appended a block")
			}
		})
	}
	if st, _ := tw.Town("plex"); st.WallSignatures != historyWalls()["plex"] {
		t.Fatalf("plex wall: %d", st.WallSignatures)
	}
}

// TestReopen: signatures, messages and visitors survive a restart; a
// signature the chain holds but the index missed (a crash between the
// append and the index) is indexed at Open; an index of another chain is
// rebuilt.
func TestReopen(t *testing.T) {
	e := newEnv(t)
	tw := e.open(t)
	ctx := context.Background()
	sig, err := tw.Sign(ctx, "kipp", SignatureDraft{"Grace", "Persistent."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Chat(ctx, "kipp", "Do you remember?"); err != nil {
		t.Fatal(err)
	}
	tw.Visit(ctx, "kipp", netip.MustParseAddr("192.0.2.7"))
	// Appended, never indexed: as if the process died in between.
	payload := `{"message":"Crashed before the index.","permanent":true,"signer":"Linus","town":"kipp"}`
	missed, err := e.ledger.Append(ctx, ledger.Entry{Kind: KindWallSignature, Payload: []byte(payload)})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()

	tw = e.open(t)
	st, _ := tw.Town("kipp")
	if st.WallSignatures != historyWalls()["kipp"]+2 || st.Messages != 1 || st.Visitors != 1 {
		t.Fatalf("after reopening: %+v", st)
	}
	wall, _ := tw.Wall(ctx, "kipp", 0, 2)
	if len(wall) != 2 || wall[0].Witness.BlockIndex != missed.Index() || wall[0].Signer != "Linus" || wall[1].Witness != sig.Witness {
		t.Fatalf("wall after reopening: %+v", wall)
	}
	msgs, err := tw.Messages(ctx, "kipp", 10)
	if err != nil || len(msgs) != 1 || msgs[0].Message != "Do you remember?" || msgs[0].Reply.Node != "S4_KIPP" {
		t.Fatalf("messages after reopening: %+v, %v", msgs, err)
	}
	tw.Close()

	// The same towns folder over another chain: the index is rebuilt.
	other := filepath.Join(t.TempDir(), "ledger")
	createLedger(t, other, false)
	e.ledger = openLedger(t, other)
	tw = e.open(t)
	if st, _ := tw.Town("kipp"); st.WallSignatures != 0 {
		t.Fatalf("index of another chain kept: %+v", st)
	}
}

func TestVisitors(t *testing.T) {
	e := newEnv(t)
	tw := e.open(t)
	ctx := context.Background()
	visit := func(town, addr string) {
		t.Helper()
		if err := tw.Visit(ctx, town, netip.MustParseAddr(addr)); err != nil {
			t.Fatal(err)
		}
	}
	count := func(town string) (int64, int64) {
		st, _ := tw.Town(town)
		return st.Visitors, st.VisitorsToday
	}
	visit("case", "192.0.2.1")
	visit("case", "192.0.2.1")
	visit("case", "::ffff:192.0.2.1") // the same client
	visit("case", "2001:db8:1:2::1")
	visit("case", "2001:db8:1:2::99") // the same /64
	visit("tars", "192.0.2.1")        // another town
	if total, today := count("case"); total != 2 || today != 2 {
		t.Fatalf("case: %d visitors, %d today", total, today)
	}
	e.clock.add(24 * time.Hour) // a new day, a new salt: the same client counts again
	visit("case", "192.0.2.1")
	if total, today := count("case"); total != 3 || today != 1 {
		t.Fatalf("case the next day: %d visitors, %d today", total, today)
	}
	if total, _ := count("tars"); total != 1 {
		t.Fatalf("tars: %d", total)
	}
	if err := tw.Visit(ctx, "vega", netip.MustParseAddr("192.0.2.1")); !errors.Is(err, ErrUnknownTown) {
		t.Fatalf("unknown town: %v", err)
	}
	// Only the counts are stored: no address or hash is in the store.
	var n int
	tw.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT IN ('meta', 'visitors', 'messages', 'wall', 'sqlite_sequence')`).Scan(&n)
	var cols string
	tw.db.QueryRow(`SELECT group_concat(name) FROM pragma_table_info('visitors')`).Scan(&cols)
	if n != 0 || cols != "town,count" {
		t.Fatalf("the store holds more than counts: %d other tables, visitors(%s)", n, cols)
	}
}

func TestChat(t *testing.T) {
	e := newEnv(t)
	e.remember(t, "case", `"The seam at 153 is documented in site.yaml."`)
	e.remember(t, "case", `{"fact":"block 152 is off the spine"}`)
	e.remember(t, "tars", `"not case's memory"`)
	tw := e.open(t)
	ctx := context.Background()

	m, err := tw.Chat(ctx, "case", "  What do you remember?\nTell me. ")
	if err != nil {
		t.Fatal(err)
	}
	r := e.responder
	if r.node != "S2_CASE" || r.msg != "What do you remember?\nTell me." || len(r.memory) != 2 ||
		r.memory[0] != `{"fact":"block 152 is off the spine"}` || r.memory[1] != "The seam at 153 is documented in site.yaml." {
		t.Fatalf("the node was asked %q with memory %q", r.msg, r.memory)
	}
	if m.MemoriesGiven != 2 || m.Reply.Node != "S2_CASE" || m.Town != "case" {
		t.Fatalf("message: %+v", m)
	}
	if st, _ := tw.Town("case"); st.Messages != 1 {
		t.Fatalf("case: %+v", st)
	}

	calls := r.calls
	for _, msg := range []string{"", strings.Repeat("x", MaxChatRunes+1), "a\u202eb", "a\x00b"} {
		if _, err := tw.Chat(ctx, "case", msg); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", msg, err)
		}
	}
	r.fail = errors.New("provider down")
	if _, err := tw.Chat(ctx, "case", "hello"); err == nil {
		t.Error("a failed reply was kept")
	}
	if st, _ := tw.Town("case"); r.calls != calls+1 || st.Messages != 1 {
		t.Fatalf("refused messages reached the node (%d calls) or were kept: %+v", r.calls-calls, st)
	}
}

func TestExchange(t *testing.T) {
	e := newEnv(t)
	e.remember(t, "tars", `"TARS keeps the second readings."`)
	tw := e.open(t)
	ctx := context.Background()
	blocks := e.ledger.Count()

	payload := " Please give this a second reading. "
	ex, err := tw.Exchange(ctx, "case", ExchangeRequest{To: "tars", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if ex.From != "case" || ex.To != "tars" || ex.Response.Node != "S3_TARS" || !strings.HasPrefix(ex.RequestID, "req-") ||
		ex.PayloadHash != sha256.Sum256([]byte(payload)) || ex.ResponseHash != sha256.Sum256([]byte(ex.Response.Text)) {
		t.Fatalf("exchange: %+v", ex)
	}
	if len(e.responder.memory) != 1 || e.responder.msg != payload || e.responder.from != "S2_CASE" {
		t.Fatalf("TARS was asked %q with memory %q", e.responder.msg, e.responder.memory)
	}
	want := `{"from":"s2","payload_hash":"` + ex.PayloadHash.String() + `","request_id":"` + ex.RequestID + `","response_hash":"` + ex.ResponseHash.String() + `","to":"s3"}`
	if string(ex.Record) != want || e.ledger.Count() != blocks+1 || e.ledger.Head().Header().Kind != KindExchange {
		t.Fatalf("record %s, want %s", ex.Record, want)
	}
	requireWitnessed(t, e.ledger, ex.Witness, ex.Record)
	requireVerifies(t, e.ledger)

	calls := e.responder.calls
	for _, tc := range []struct {
		req   ExchangeRequest
		field string
	}{
		{ExchangeRequest{To: "case", Payload: "to myself"}, "to"},
		{ExchangeRequest{To: "vega", Payload: "to a node without a town"}, "to"},
		{ExchangeRequest{To: "tars", Payload: ""}, "payload"},
		{ExchangeRequest{To: "tars", Payload: "\u2066hidden"}, "payload"},
	} {
		var fe *FieldError
		if _, err := tw.Exchange(ctx, "case", tc.req); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v", tc.req, err)
		}
	}
	if e.ledger.Count() != blocks+1 || e.responder.calls != calls {
		t.Fatal("a refused exchange was sent or recorded")
	}
}
