package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/receipt"
)

// NodeKeysFile, in the data folder, publishes the public halves of the
// nodes' receipt keys (receipt.KeysDocument): the build lists them in
// ai.json, the live edge in /api/nodes.
const NodeKeysFile = "node-keys.json"

// NodeKeyName is the key store's name of a node's receipt key: "nodes/"
// and the designation in lower case with - for _ (S5_LOCUS is
// nodes/s5-locus, kept in keys/nodes/s5-locus.pem).
func NodeKeyName(designation string) string {
	return "nodes/" + strings.ReplaceAll(strings.ToLower(designation), "_", "-")
}

// NodeKeys returns the receipt keys of the nodes opts.NodeKeys names, by
// designation, each generated on first use, and publishes their public
// halves in DataDir/node-keys.json. The writer and witness keys must
// exist (Init).
func NodeKeys(opts Options) (map[string]ledger.PrivateKey, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	ks, err := keystore.Open(opts.Keys)
	if err != nil {
		return nil, fmt.Errorf("chain: node keys: %w", err)
	}
	keys := map[string]ledger.PrivateKey{}
	doc := receipt.KeysDocument{Keys: []receipt.KeyRecord{}}
	for _, d := range opts.NodeKeys {
		k, err := ks.Key(NodeKeyName(d))
		if err != nil {
			return nil, fmt.Errorf("chain: node %s: %w", d, err)
		}
		keys[d] = k
		doc.Keys = append(doc.Keys, receipt.Publish(d, k.Public()))
	}
	if len(doc.Keys) == 0 {
		return keys, nil
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	path := filepath.Join(opts.DataDir, NodeKeysFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return keys, nil
	}
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	return keys, nil
}

// PublishedNodeKeys returns the node keys the data folder publishes; the
// error matches fs.ErrNotExist when it publishes none.
func PublishedNodeKeys(dataDir string) ([]receipt.KeyRecord, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, NodeKeysFile))
	if err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	_, keys, err := receipt.ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("chain: %s: %w", NodeKeysFile, err)
	}
	return keys, nil
}
