package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/proofsite/proofsite/ledger"
	"go.yaml.in/yaml/v3"
)

// documentedSeams reads ledger.documented_seams from contentDir/site.yaml and
// nothing else. A missing file means no seams. (The site content loader
// replaces this when the branches merge.)
func documentedSeams(contentDir string) ([]ledger.Seam, error) {
	path := filepath.Join(contentDir, "site.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Ledger struct {
			DocumentedSeams []ledger.Seam `yaml:"documented_seams"`
		} `yaml:"ledger"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := make(map[int64]bool)
	for i, s := range doc.Ledger.DocumentedSeams {
		switch {
		case s.Block <= 0:
			return nil, fmt.Errorf("%s: ledger.documented_seams[%d]: block must be a positive index", path, i)
		case s.Reason == "":
			return nil, fmt.Errorf("%s: ledger.documented_seams[%d]: a seam needs a reason", path, i)
		case seen[s.Block]:
			return nil, fmt.Errorf("%s: ledger.documented_seams: block %d listed twice", path, s.Block)
		}
		seen[s.Block] = true
	}
	return doc.Ledger.DocumentedSeams, nil
}
