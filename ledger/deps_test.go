package ledger

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency edges of ARCHITECTURE §2: ledger imports nothing of ours
// and only the standard library plus the JCS library. Which packages may
// import Badger is checked with the other module-wide edges in
// cmd/proofsite/architecture_test.go.
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
}
