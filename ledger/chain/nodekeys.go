package chain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/keystore"
)

// nodeKeyDir is the folder of the node keys in the key store's folder.
const nodeKeyDir = "nodes"

// NodeKeyName is the key store's name of a node's receipt key: "nodes/"
// and the designation in lower case with - for _ (S5_LOCUS is
// nodes/s5-locus, kept in keys/nodes/s5-locus.pem).
func NodeKeyName(designation string) string {
	return nodeKeyDir + "/" + strings.ReplaceAll(strings.ToLower(designation), "_", "-")
}

// nodeKeys returns the receipt keys of the nodes o.NodeKeys names, by
// designation, each generated on first use, and their records as the
// trust document publishes them (role node, with the designation).
func (o *Options) nodeKeys(ks *keystore.Keystore) (map[string]ledger.PrivateKey, []ledger.PublishedKey, error) {
	keys := map[string]ledger.PrivateKey{}
	var published []ledger.PublishedKey
	for _, d := range o.NodeKeys {
		k, err := ks.Key(NodeKeyName(d))
		if err != nil {
			return nil, nil, fmt.Errorf("chain: node %s: %w", d, err)
		}
		keys[d] = k
		published = append(published, ledger.PublishNode(k.Public(), d))
	}
	return keys, published, nil
}

// NodeKeys returns the receipt keys of the nodes Options.NodeKeys names, by
// designation. Each must be published in the trust document the chain was
// opened with (Init and Bootstrap publish them): a key a verifier cannot
// pin signs nothing. A read-only chain has none.
func (c *Chain) NodeKeys() (map[string]ledger.PrivateKey, error) {
	if c.signers == nil {
		return nil, ErrReadOnly
	}
	ks, err := keystore.Open(c.opts.Keys)
	if err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	keys, published, err := c.opts.nodeKeys(ks)
	if err != nil {
		return nil, err
	}
	for _, p := range published {
		if !slices.Contains(c.trust.Keys, p) {
			return nil, fmt.Errorf("%w: the receipt key %s of %s is not in %s; \"proofsite ledger init\" publishes it", ErrTrustOutdated, p.KeyID, p.Node, c.opts.trustFile())
		}
	}
	return keys, nil
}
