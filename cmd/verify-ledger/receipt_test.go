package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/receipt"
)

func seeded(t *testing.T, b byte) ledger.PrivateKey {
	t.Helper()
	k, err := ledger.NewPrivateKeyFromSeed(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// receiptFixture writes a trust document pinning S5_LOCUS's node key and
// returns it with an answer of /api/ember that carries its receipt, the
// request it answered, and the library's keyring for the same keys.
func receiptFixture(t *testing.T) (keysFile string, request, answer []byte, kr receipt.Keyring) {
	t.Helper()
	node := seeded(t, 9)
	signers := ledger.Signers{Writer: seeded(t, 1), Witnesses: []ledger.PrivateKey{seeded(t, 2), seeded(t, 3)}}
	doc, err := ledger.NewTrustDocument(signers, []ledger.PublishedKey{ledger.PublishNode(node.Public(), "S5_LOCUS")},
		ledger.Hash{1}, nil, 2, "proof.example/ledger")
	if err != nil {
		t.Fatal(err)
	}
	keysFile = filepath.Join(t.TempDir(), "keys.json")
	docJSON, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keysFile, docJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	request = []byte(`{"message": "Who is the Bridge?"}`)
	body := []byte(`{"node":"S5_LOCUS","provider":"offline","model":"grounded-retrieval-v1","text":"Article 9 <quoted> & cited: \"the Bridge\"","isolation":{"memory":false}}`)
	reqHash, _ := receipt.HashJSON(request)
	respHash, _ := receipt.HashResponse(body)
	r, err := receipt.Issue(receipt.Fields{Route: "/api/ember", Node: "S5_LOCUS", Provider: "offline", Model: "grounded-retrieval-v1",
		RequestSHA256: reqHash, ResponseSHA256: respHash}, node, time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC), nil)
	if err != nil {
		t.Fatal(err)
	}
	rj, _ := r.JSON()
	answer = append(append(bytes.TrimSuffix(body, []byte("}")), `,"receipt":`...), append(rj, '}')...)
	kr, err = receipt.KeyringOf(doc.Keys)
	if err != nil {
		t.Fatal(err)
	}
	return keysFile, request, answer, kr
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReceiptMode(t *testing.T) {
	keys, request, answer, _ := receiptFixture(t)
	var top struct{ Receipt json.RawMessage }
	json.Unmarshal(answer, &top)
	other := strings.Replace(string(answer), `"text":"Article 9`, `"text":"Article 8`, 1)
	doc, _ := os.ReadFile(keys)
	lumenKeys := writeTemp(t, "keys.json", bytes.Replace(doc, []byte(`"node":"S5_LOCUS"`), []byte(`"node":"S17_LUMEN"`), 1))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"whole answer", []string{"--keys", keys, writeTemp(t, "answer.json", answer)}, 0, "RECEIPT VERIFIED\nnode     S5_LOCUS\nroute    /api/ember"},
		{"answer and request", []string{"--keys", keys, "--request", writeTemp(t, "req.json", request), writeTemp(t, "answer.json", answer)}, 0,
			"checked  form, key, signature, request_sha256, response_sha256"},
		{"receipt alone", []string{"--keys", keys, writeTemp(t, "r.json", top.Receipt)}, 0, "checked  form, key, signature\n"},
		{"another request", []string{"--keys", keys, "--request", writeTemp(t, "req.json", []byte(`{"message":"Who else?"}`)), writeTemp(t, "r.json", top.Receipt)}, 1,
			"request_sha256: the request given hashes to"},
		{"a changed answer", []string{"--keys", keys, writeTemp(t, "answer.json", []byte(other))}, 1, "response_sha256: the response given hashes to"},
		{"a changed model", []string{"--keys", keys, writeTemp(t, "r.json", bytes.Replace(top.Receipt, []byte("retrieval-v1"), []byte("retrieval-v2"), 1))}, 1,
			"signature: not a signature"},
		{"the key pinned for another node", []string{"--keys", lumenKeys, writeTemp(t, "r.json", top.Receipt)}, 1,
			"node: the key ed25519:"},
		{"no keys", []string{writeTemp(t, "r.json", top.Receipt)}, 64, ""},
		{"unreadable", []string{"--keys", keys, filepath.Join(t.TempDir(), "missing.json")}, 64, ""},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"receipt"}, tc.args...), nil, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: exit %d (want %d)\n%s%s", tc.name, code, tc.code, out.String(), errOut.String())
		}
	}
}

// The standalone check and the library (POST /api/agent/receipt) agree on
// every receipt one byte away from a valid one: neither passes a change
// the other refuses.
func TestReceiptModeAgreesWithLibrary(t *testing.T) {
	keys, _, answer, kr := receiptFixture(t)
	var top struct{ Receipt json.RawMessage }
	json.Unmarshal(answer, &top)
	tr, err := readTrust(keys)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := pinKeys(tr.Keys)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(top.Receipt)
	for i := range data {
		for _, b := range []byte{'0', 'a', 'Z', '"', ' '} {
			if data[i] == b {
				continue
			}
			changed := bytes.Clone(data)
			changed[i] = b
			_, libErr := receipt.Verify(changed, kr, receipt.Evidence{})
			_, ourErr := checkReceipt(changed, pinned, nil, nil)
			if (libErr == nil) != (ourErr == nil) {
				t.Fatalf("byte %d -> %q: library %v, verifier %v\n%s", i, b, libErr, ourErr, changed)
			}
		}
	}
	if _, err := checkReceipt(data, pinned, nil, nil); err != nil {
		t.Fatal(err)
	}
}
