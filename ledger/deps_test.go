package ledger

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency edges of ARCHITECTURE §2: ledger imports nothing of ours
// and only the standard library plus the JCS library; only ledger/store
// imports Badger.
func TestDependencyEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/proofsite/proofsite/ledger" && dep != "github.com/gowebpki/jcs" {
			t.Errorf("ledger depends on %s", dep)
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "github.com/proofsite/proofsite/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		if strings.Contains(imports, "github.com/dgraph-io/badger") && pkg != "github.com/proofsite/proofsite/ledger/store" {
			t.Errorf("%s imports Badger; only ledger/store may", pkg)
		}
	}
}
