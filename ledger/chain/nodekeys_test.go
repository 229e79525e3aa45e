package chain

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/proofsite/proofsite/ledger/keystore"
)

func TestNodeKeys(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	opts.NodeKeys = []string{"S2_CASE", "S5_LOCUS"}
	if _, err := NodeKeys(opts); !errors.Is(err, keystore.ErrNoKeys) {
		t.Fatalf("before Init: %v, want ErrNoKeys", err)
	}
	if _, err := PublishedNodeKeys(opts.DataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("before Init: %v", err)
	}
	initChain(t, opts)
	first, err := NodeKeys(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first["S2_CASE"].ID() == first["S5_LOCUS"].ID() {
		t.Fatalf("keys %v", first)
	}
	if _, err := os.Stat(filepath.Join(opts.DataDir, "keys", "nodes", "s5-locus.pem")); err != nil {
		t.Error(err)
	}
	again, err := NodeKeys(opts)
	if err != nil {
		t.Fatal(err)
	}
	published, err := PublishedNodeKeys(opts.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range opts.NodeKeys {
		if again[d].ID() != first[d].ID() {
			t.Errorf("%s: a second start made a new key", d)
		}
		if p := published[i]; p.Node != d || p.KeyID != first[d].ID() || p.Role != "node" || p.PublicKey != first[d].Public().String() {
			t.Errorf("published %+v", p)
		}
	}
}
