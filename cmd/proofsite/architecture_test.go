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
		{"live/...", []string{mod + "/site", mod + "/cmd", mod + "/templates", mod + "/ledger/store"}},
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

// TestBadgerImporters keeps Badger behind two owners: the chain's store and
// the memory store's primary, each in a directory of its own.
func TestBadgerImporters(t *testing.T) {
	const mod = "github.com/proofsite/proofsite"
	allowed := map[string]string{
		mod + "/ledger/store": "the chain",
		mod + "/live/memory":  "memories' primary store, in its own directory (ARCHITECTURE 5a: dual-write with an outbox)",
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if (imp == "github.com/dgraph-io/badger/v4" || strings.HasPrefix(imp, "github.com/dgraph-io/badger/v4/")) && allowed[fields[0]] == "" {
				t.Errorf("%s imports %s; only %v may", fields[0], imp, allowed)
			}
		}
	}
}
