package main

import (
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

func seamsOf(cfg *content.Config) []ledger.Seam {
	seams := make([]ledger.Seam, len(cfg.Ledger.DocumentedSeams))
	for i, s := range cfg.Ledger.DocumentedSeams {
		seams[i] = ledger.Seam{Block: int64(s.Block), Reason: s.Reason}
	}
	return seams
}
