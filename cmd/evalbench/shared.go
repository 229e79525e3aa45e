package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proofsite/proofsite/live/eval/quality"
)

// The shared set's files (see its SOURCES.md).
var sharedFiles = []string{"attacks.jsonl", "benign.jsonl"}

// readShared reads the shared held-out set; an error matching
// os.ErrNotExist means it is not there. Its manifest's counts are checked
// so a truncated copy is not measured as if whole.
func readShared(dir string) ([]quality.Sample, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return nil, fmt.Errorf("%s/manifest.json: %w", dir, err)
	}
	var all []quality.Sample
	for _, f := range sharedFiles {
		s, err := quality.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		all = append(all, s...)
	}
	counts := map[string]int{}
	for _, s := range all {
		counts[s.Label]++
	}
	for label, want := range manifest.Counts {
		if counts[label] != want {
			return nil, fmt.Errorf("%s: %d %s texts, the manifest says %d", dir, counts[label], label, want)
		}
	}
	return all, nil
}

// sharedCategory maps the evaluator's categories to the shared set's
// vocabulary (SOURCES.md): prompt_extraction is what the evaluator calls
// exfiltration, harmful what it calls harmful_content.
func sharedCategory(c string) string {
	switch c {
	case "prompt_injection", "jailbreak":
		return c
	case "exfiltration":
		return "prompt_extraction"
	case "harmful_content":
		return "harmful"
	}
	return "other"
}
