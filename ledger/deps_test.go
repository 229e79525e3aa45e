package ledger

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The dependency edges of ARCHITECTURE §2: ledger imports nothing of ours
// but the transparency-log layer below it (ledger/tlog), and besides the
// standard library only the JCS library and what ledger/tlog uses (the
// transparency-dev Merkle maths and checkpoint format, the sumdb note);
// only ledger/store imports Badger.
func TestDependencyEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := []string{"github.com/proofsite/proofsite/ledger", "github.com/proofsite/proofsite/ledger/tlog", "github.com/gowebpki/jcs",
		"github.com/transparency-dev/merkle", "github.com/transparency-dev/formats/log", "golang.org/x/mod/sumdb/note"}
	for _, dep := range strings.Fields(string(out)) {
		if !slices.ContainsFunc(allowed, func(a string) bool { return dep == a || strings.HasPrefix(dep, a+"/") }) {
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
