package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/chain/chaintest"
	"github.com/proofsite/proofsite/ledger/keystore"
)

// tileChain is a real chain (Badger, ed25519) whose tiles folder is served
// over real HTTP on 127.0.0.1, as a static host would.
type tileChain struct {
	c          *chain.Chain
	data, keys string
	url        string
}

// newTileChain's chain shares its keys with the test process's other test
// chains; freshKeys gives it keys of its own.
func newTileChain(t testing.TB, origin string, freshKeys bool) *tileChain {
	t.Helper()
	opts := chain.Options{DataDir: filepath.Join(t.TempDir(), "data"), LogOrigin: origin}
	if freshKeys {
		opts.Keys = keystore.Options{Dir: filepath.Join(opts.DataDir, chain.KeysDir), WitnessDir: filepath.Join(opts.DataDir, chain.WitnessKeyDir)}
	}
	c := chaintest.Walked(t, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.StripPrefix("/ledger/", http.FileServer(http.Dir(filepath.Join(opts.DataDir, chain.TilesDir))))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &tileChain{c: c, data: opts.DataDir, keys: filepath.Join(opts.DataDir, chain.KeysFile), url: "http://" + ln.Addr().String() + "/ledger/"}
}

func (tc *tileChain) append(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := tc.c.Append(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// file is a path in the chain's tiles folder.
func (tc *tileChain) file(name string) string {
	return filepath.Join(tc.data, chain.TilesDir, filepath.FromSlash(name))
}

// flip changes one byte of a file (at < 0 counts from its end) and returns a function
// that puts it back.
func flip(t *testing.T, path string, at int) (restore func()) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	if at < 0 { // from the end
		at += len(bad)
	}
	bad[at] ^= 1
	os.WriteFile(path, bad, 0o644)
	return func() { os.WriteFile(path, data, 0o644) }
}

func runTiles(t *testing.T, args ...string) (int, verdict) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"--tiles", "--json"}, args...), nil, &out, &errOut)
	var v verdict
	if code != 64 {
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("exit %d, output %s %s", code, out.String(), errOut.String())
		}
	}
	return code, v
}

// Tiles mode verifies the log from its tiles alone: every row the first
// time, then, with --state, only the rows appended since, with the tiles
// proving the remembered rows unchanged. Damaged tiles, bundles and
// checkpoints fail loudly, and nothing is remembered from a failed run.
func TestTilesMode(t *testing.T) {
	tc := newTileChain(t, "proof.example/ledger", false)
	state := filepath.Join(t.TempDir(), "state.json")
	code, v := runTiles(t, "--keys", tc.keys, "--state", state, tc.url)
	if code != 0 || v.Verdict != "PASS_WITH_DOCUMENTED_STRICT_SEAM" || v.Rows != 224 || v.StrictTableBreakAtBlock == nil || *v.StrictTableBreakAtBlock != 153 {
		t.Fatalf("first run: exit %d %+v", code, v)
	}

	tc.append(t, 40) // 224 -> 264: a level-0 tile fills up, its partials go
	code, v = runTiles(t, "--keys", tc.keys, "--state", state, tc.url)
	if code != 0 || v.Verdict != "PASS_WITH_DOCUMENTED_STRICT_SEAM" || v.Rows != 40 || !strings.HasPrefix(v.Head, "263 ") ||
		!strings.Contains(strings.Join(v.Notes, "\n"), "incremental") {
		t.Fatalf("incremental run: exit %d %+v", code, v)
	}
	saved, _ := os.ReadFile(state)
	tc.append(t, 5) // 264 -> 269

	for _, tamper := range []struct {
		name, file string
		at         int
		want       string
	}{
		// A new row's bytes (the last row's witness signature): they no
		// longer hash to the signed root.
		{"new entry", "tile/entries/001.p/13", -40, "FAIL_CHECKPOINT_INVALID"},
		// The root of the first 256 rows, which proves them unchanged.
		{"hash tile", "tile/1/000.p/1", 7, "FAIL_CHECKPOINT_NOT_EXTENDED"},
		// The checkpoint's signed text.
		{"checkpoint", "checkpoint", 25, "FAIL_CHECKPOINT_INVALID"},
	} {
		restore := flip(t, tc.file(tamper.file), tamper.at)
		code, v = runTiles(t, "--keys", tc.keys, "--state", state, tc.url)
		restore()
		if code != 1 || v.Verdict != tamper.want {
			t.Errorf("%s tampered: exit %d %s, want %s (%v)", tamper.name, code, v.Verdict, tamper.want, v.Failures)
		}
		if again, _ := os.ReadFile(state); !bytes.Equal(again, saved) {
			t.Fatalf("%s: a failed run changed the state", tamper.name)
		}
	}
	// Without the state, every row is read: a damaged old row fails too,
	// and so does a hash tile.
	for _, name := range []string{"tile/entries/000", "tile/0/001.p/13"} {
		restore := flip(t, tc.file(name), 100)
		code, v = runTiles(t, "--keys", tc.keys, tc.url)
		restore()
		if code != 1 || v.Verdict != "FAIL_CHECKPOINT_INVALID" {
			t.Errorf("%s tampered, full run: exit %d %+v", name, code, v)
		}
	}
	code, v = runTiles(t, "--keys", tc.keys, "--state", state, tc.url)
	if code != 0 || v.Rows != 5 {
		t.Fatalf("after the tampering is undone: exit %d %+v", code, v)
	}

	// Another chain under the same origin (a rewrite with new keys) does
	// not extend what was remembered, whatever its keys say.
	other := newTileChain(t, "proof.example/ledger", true)
	code, v = runTiles(t, "--keys", other.keys, "--state", state, other.url)
	if code != 1 || v.Verdict != "FAIL_CHECKPOINT_NOT_EXTENDED" {
		t.Fatalf("a rewritten log: exit %d %+v", code, v)
	}
	// A checkpoint key that did not sign the log.
	code, v = runTiles(t, "--keys", other.keys, tc.url)
	if code != 1 || v.Verdict != "FAIL_CHECKPOINT_INVALID" {
		t.Fatalf("the other log's key: exit %d %+v", code, v)
	}
	// The folder form, as a build publishes it.
	code, v = runTiles(t, "--keys", tc.keys, filepath.Join(tc.data, chain.TilesDir))
	if code != 0 || v.Rows != 269 {
		t.Fatalf("folder: exit %d %+v", code, v)
	}
	// Tiles mode needs the checkpoint key.
	if code, _ := runTiles(t, tc.url); code != 64 {
		t.Fatalf("without --keys: exit %d", code)
	}
}

// The verifier's own cosignature check agrees with transparency-dev's
// cosignature/v1 signer: a cosignature it makes counts, one over another
// text or by another key does not.
func TestCosignaturesMatchLibrary(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	vkey, _ := note.NewEd25519VerifierKey("witness.test/w1", priv.Public().(ed25519.PublicKey))
	cosigKey, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	hash, _, _ := strings.Cut(strings.TrimPrefix(vkey, "witness.test/w1+"), "+")
	signer, err := fnote.NewSignerForCosignatureV1("PRIVATE+KEY+witness.test/w1+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, priv.Seed()...)))
	if err != nil {
		t.Fatal(err)
	}
	text := "proof.test/ledger\n3\nqNBSUh28SBYJhVekPsml/6VWVRvpgLOLasZGNJfOxuc=\n"
	signed, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		t.Fatal(err)
	}
	k, err := parseCosignerKey(cosigKey)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := cosigned(string(signed), text, []*noteKey{k}); n != 1 {
		t.Fatalf("the library's cosignature does not count:\n%s", signed)
	}
	other := strings.Replace(text, "\n3\n", "\n4\n", 1)
	if n, why := cosigned(string(signed), other, []*noteKey{k}); n != 0 || why == "" {
		t.Fatal("a cosignature over another checkpoint counts")
	}
	if _, err := parseCosignerKey(vkey); err == nil {
		t.Fatal("a plain note key (0x01) is taken as a cosigner key")
	}
}
