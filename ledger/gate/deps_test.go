package gate

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The gate imports the ledger and the standard library only (the ledger
// brings the JCS library and its transparency-log layer, ledger/tlog, with
// the libraries that uses); never site, live or the store.
func TestDependencyEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := []string{"github.com/proofsite/proofsite/ledger/gate", "github.com/proofsite/proofsite/ledger", "github.com/proofsite/proofsite/ledger/tlog",
		"github.com/gowebpki/jcs", "github.com/transparency-dev/merkle", "github.com/transparency-dev/formats/log", "golang.org/x/mod/sumdb/note"}
	for _, dep := range strings.Fields(string(out)) {
		if !slices.ContainsFunc(allowed, func(a string) bool { return dep == a || strings.HasPrefix(dep, a+"/") }) {
			t.Errorf("ledger/gate depends on %s", dep)
		}
	}
}
