package chain

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

// The nodes' receipt keys live in the key store and are published in the
// one trust document, role node with their designation; a chain signs only
// with node keys that document lists.
func TestNodeKeys(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	initChain(t, opts) // no nodes yet
	opts.NodeKeys = []string{"S2_CASE", "S5_LOCUS"}

	before, _ := Open(opts)
	if _, err := before.NodeKeys(); !errors.Is(err, ErrTrustOutdated) {
		t.Fatalf("node keys not yet published: %v, want ErrTrustOutdated", err)
	}
	before.Close()

	if changed, err := PublishTrust(opts); err != nil || !changed {
		t.Fatalf("PublishTrust: %v %v", changed, err)
	}
	if _, err := os.Stat(filepath.Join(opts.DataDir, "keys", "nodes", "s5-locus.pem")); err != nil {
		t.Error(err)
	}
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.NodeKeys()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys["S2_CASE"].ID() == keys["S5_LOCUS"].ID() {
		t.Fatalf("keys %v", keys)
	}
	trust, _, err := PublishedTrust(opts.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range opts.NodeKeys {
		want := ledger.PublishNode(keys[d].Public(), d)
		if !slices.Contains(trust.Keys, want) {
			t.Errorf("%s: %+v not in the trust document %+v", d, want, trust.Keys)
		}
	}
	if changed, err := PublishTrust(opts); err != nil || changed {
		t.Errorf("a second PublishTrust: %v %v (the same keys publish the same document)", changed, err)
	}
	// Init on the existing chain keeps them.
	if rep := initChain(t, opts); rep.TrustPublished {
		t.Error("Init rewrote the trust document")
	}
}
