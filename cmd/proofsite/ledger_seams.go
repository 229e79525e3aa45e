package main

import (
	"fmt"
	"net/url"
	"os"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/site/content"
)

// documentedSeams reads the documented strict-table seams from the content's
// site.yaml.
func documentedSeams(contentDir string) ([]ledger.Seam, error) {
	cfg, err := content.LoadConfig(os.DirFS(contentDir))
	if err != nil {
		return nil, err
	}
	return seamsOf(cfg), nil
}

// trustDocument builds this instance's trust document: its keys and the
// Bridge keys pinned in site.yaml, the genesis, the pinned seams, the
// default witness quorum and the log named after the host of base_url.
// TODO(integrity wiring): the quorum from site.yaml.
func trustDocument(contentDir string, signers ledger.Signers, genesis ledger.Hash, seams []ledger.Seam) (ledger.TrustDocument, error) {
	cfg, err := content.LoadConfig(os.DirFS(contentDir))
	if err != nil {
		return ledger.TrustDocument{}, err
	}
	var bridge []ledger.PublishedKey
	for _, k := range cfg.Gate.BridgeKeys {
		pub, err := ledger.ParsePublicKeyHex(k.PublicKey)
		if err != nil {
			return ledger.TrustDocument{}, fmt.Errorf("site.yaml gate.bridge_keys %s: %w", k.KeyID, err)
		}
		bridge = append(bridge, ledger.Publish(pub, ledger.RoleBridge))
	}
	u, err := url.Parse(cfg.Site.BaseURL)
	if err != nil || u.Host == "" {
		return ledger.TrustDocument{}, fmt.Errorf("site.yaml site.base_url %q has no host to name the log after", cfg.Site.BaseURL)
	}
	return ledger.NewTrustDocument(signers, bridge, genesis, seams, ledger.DefaultWitnessQuorum, u.Host+"/ledger")
}

func seamsOf(cfg *content.Config) []ledger.Seam {
	seams := make([]ledger.Seam, len(cfg.Ledger.DocumentedSeams))
	for i, s := range cfg.Ledger.DocumentedSeams {
		seams[i] = ledger.Seam{Block: int64(s.Block), Reason: s.Reason}
	}
	return seams
}
