package gate

import (
	"os/exec"
	"strings"
	"testing"
)

// The gate imports the ledger and the standard library only (the ledger
// brings the JCS library); never site, live or the store.
func TestDependencyEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/proofsite/proofsite/ledger/gate": true,
		"github.com/proofsite/proofsite/ledger":      true,
		"github.com/gowebpki/jcs":                    true,
	}
	for _, dep := range strings.Fields(string(out)) {
		if !allowed[dep] {
			t.Errorf("ledger/gate depends on %s", dep)
		}
	}
}
