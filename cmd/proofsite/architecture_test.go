package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirections keeps the edges ARCHITECTURE.md draws:
// cmd -> site, live -> ledger, and nothing else between our packages.
func TestDependencyDirections(t *testing.T) {
	const mod = "github.com/proofsite/proofsite"
	deps := func(t *testing.T, pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", mod+"/"+pkg).Output()
		if err != nil {
			t.Skipf("go list %s: %v (not in this tree)", pkg, err)
		}
		return strings.Fields(string(out))
	}
	tests := []struct {
		pkg       string
		forbidden []string // import path prefixes
	}{
		{"ledger", []string{mod + "/site", mod + "/live", mod + "/cmd", mod + "/templates", "github.com/dgraph-io/badger/v4"}},
		{"ledger/gate", []string{mod + "/site", mod + "/live", mod + "/cmd", "github.com/dgraph-io/badger/v4"}},
		{"ledger/store", []string{mod + "/site", mod + "/live", mod + "/cmd", mod + "/templates"}},
		// site/content validates the gate policy with the checkpoint's own
		// vocabulary and key rules (pure packages), so policy errors point
		// at a line of site.yaml; it never reaches the store.
		{"site/...", []string{mod + "/live", mod + "/cmd", mod + "/ledger/store", "github.com/dgraph-io/badger/v4", "github.com/gofiber/fiber/v2"}},
		{"site/content", []string{mod + "/templates"}},
		{"live/...", []string{mod + "/site", mod + "/cmd", mod + "/templates", mod + "/ledger/store", "github.com/dgraph-io/badger/v4"}},
	}
	for _, tc := range tests {
		t.Run(tc.pkg, func(t *testing.T) {
			for _, d := range deps(t, tc.pkg) {
				for _, f := range tc.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s depends on %s", tc.pkg, d)
					}
				}
			}
		})
	}
}
