package witness_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger/tlog"
	"github.com/proofsite/proofsite/ledger/witness"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// testLog is a log of leaf hashes with a real ed25519 checkpoint key.
type testLog struct {
	origin string
	signer tlog.Signer
	vkey   string
	leaves []tlog.Hash
}

func newTestLog(t *testing.T, origin string) *testLog {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(nil)
	s, err := tlog.NewSigner(origin, priv)
	if err != nil {
		t.Fatal(err)
	}
	vkey, _ := tlog.VerifierKey(origin, priv.Public().(ed25519.PublicKey))
	return &testLog{origin: origin, signer: s, vkey: vkey}
}

func (l *testLog) grow(n int) {
	for range n {
		l.leaves = append(l.leaves, tlog.LeafHash([]byte{byte(len(l.leaves)), byte(len(l.leaves) >> 8)}))
	}
}

func (l *testLog) checkpoint(t *testing.T) []byte {
	t.Helper()
	root, _ := tlog.Roots(l.leaves)
	signed, err := tlog.Sign(tlog.Checkpoint{Origin: l.origin, Size: uint64(len(l.leaves)), Root: root}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// proof is a consistency proof computed from the leaves alone.
func (l *testLog) proof(old uint64) (tlog.Proof, error) {
	return tlog.ConsistencyProof(old, uint64(len(l.leaves)), func(id tlog.NodeID) (tlog.Hash, error) {
		lo, hi := id.Index<<id.Level, (id.Index+1)<<id.Level
		root, _ := tlog.Roots(l.leaves[lo:hi])
		return root, nil
	})
}

func startWitness(t *testing.T, state string, logs map[string]string) (*witness.Witness, string) {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	return startWitnessWithKey(t, key, state, logs)
}

func startWitnessWithKey(t *testing.T, key ed25519.PrivateKey, state string, logs map[string]string) (*witness.Witness, string) {
	t.Helper()
	w, err := witness.New(witness.Options{Name: "witness.test/w1", Key: key, StateFile: state, Logs: logs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return w, "http://" + ln.Addr().String() + "/"
}

// A log gets cosignatures for checkpoints that extend the last one the
// witness cosigned, over real HTTP; the witness remembers across restarts
// and refuses a rewritten log, and the cosignatures verify with
// transparency-dev's cosignature verifier.
func TestWitnessCosignsOnlyExtensions(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, "proof.test/ledger")
	state := filepath.Join(t.TempDir(), "state.json")
	_, key, _ := ed25519.GenerateKey(nil)
	w, url := startWitnessWithKey(t, key, state, map[string]string{l.origin: l.vkey})
	c := witness.Client{URL: url, VerifierKey: w.VerifierKey()}
	verifier, err := fnote.NewVerifierForCosignatureV1(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}

	var held uint64
	for _, n := range []int{5, 0, 300, 1} {
		l.grow(n)
		signed := l.checkpoint(t)
		line, size, err := c.Cosign(ctx, signed, held, l.proof)
		if err != nil || size != uint64(len(l.leaves)) {
			t.Fatalf("cosign at %d: %v", len(l.leaves), err)
		}
		held = size
		cosigned := append(bytes.Clone(signed), line...)
		if _, err := note.Open(cosigned, note.VerifierList(verifier)); err != nil {
			t.Fatalf("the cosignature does not verify: %v\n%s", err, cosigned)
		}
	}
	// A client that does not know what the witness holds learns it (409).
	l.grow(2)
	if _, size, err := c.Cosign(ctx, l.checkpoint(t), 0, l.proof); err != nil || size != 308 {
		t.Fatalf("from old size 0: %d %v", size, err)
	}

	// Restarted with its state, the witness refuses a rewritten log.
	_, url = startWitnessWithKey(t, key, state, map[string]string{l.origin: l.vkey})
	c.URL = url
	rewritten := newTestLog(t, l.origin)
	rewritten.signer, rewritten.vkey = l.signer, l.vkey
	rewritten.grow(400)
	rewritten.leaves[3] = tlog.LeafHash([]byte("replaced"))
	if _, _, err := c.Cosign(ctx, rewritten.checkpoint(t), 308, rewritten.proof); !errors.Is(err, witness.ErrRefused) || !strings.Contains(err.Error(), "422") {
		t.Fatalf("a rewritten log: %v", err)
	}
	// Nor does it roll back.
	l.leaves = l.leaves[:100]
	if _, _, err := c.Cosign(ctx, l.checkpoint(t), 308, l.proof); err == nil {
		t.Fatal("a truncated log was cosigned")
	}
}

// The witness answers what tlog-witness specifies for each bad request.
func TestWitnessStatuses(t *testing.T) {
	l := newTestLog(t, "proof.test/ledger")
	other := newTestLog(t, "other.test/ledger")
	_, url := startWitness(t, filepath.Join(t.TempDir(), "state.json"), map[string]string{l.origin: l.vkey})
	l.grow(10)
	good := l.checkpoint(t)
	post := func(body string) (int, string, string) {
		t.Helper()
		resp, err := http.Post(url+"add-checkpoint", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String(), resp.Header.Get("Content-Type")
	}
	forged := strings.Replace(string(good), "\n10\n", "\n11\n", 1)
	other.grow(1)
	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"no old line", "\n" + string(good), 400},
		{"old size above", "old 11\n\n" + string(good), 400},
		{"unknown log", "old 0\n\n" + string(other.checkpoint(t)), 404},
		{"forged signature", "old 0\n\n" + forged, 403},
		{"proof from zero", "old 0\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\n" + string(good), 422},
		{"wrong old size", "old 4\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\n" + string(good), 409},
		{"good", "old 0\n\n" + string(good), 200},
		{"same again", "old 10\n\n" + string(good), 200},
	} {
		status, body, ctype := post(c.body)
		if status != c.status {
			t.Errorf("%s: %d %q, want %d", c.name, status, body, c.status)
		}
		if status == 409 && (ctype != "text/x.tlog.size" || body != "0\n") {
			t.Errorf("409: %q %q", ctype, body)
		}
		if status == 200 && !strings.HasPrefix(body, "\u2014 witness.test/w1 ") {
			t.Errorf("200: %q", body)
		}
	}
	if resp, err := http.Get(url + "add-checkpoint"); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET: %v %v", resp, err)
	}
}
