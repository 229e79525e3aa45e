package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// commandDirEnv names a folder holding the real proofsite and verify-ledger
// commands: make test builds them there once for every package's tests.
// Without it, each test binary builds the commands it runs, once.
const commandDirEnv = "PROOFSITE_TEST_BIN_DIR"

var (
	builtDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "ledger-store-cmd-") })
	builds   sync.Map // command name -> func() (string, error)
)

// command returns the path of the real command name (a folder under cmd/).
func command(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv(commandDirEnv); dir != "" {
		bin := filepath.Join(dir, name)
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s: %v", commandDirEnv, err)
		}
		return bin
	}
	build, _ := builds.LoadOrStore(name, sync.OnceValues(func() (string, error) {
		dir, err := builtDir()
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/"+name).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", name, err, out)
		}
		return bin, nil
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// removeBuiltCommands deletes what command built, if anything.
func removeBuiltCommands() {
	builds.Range(func(_, build any) bool {
		if bin, err := build.(func() (string, error))(); err == nil {
			os.RemoveAll(filepath.Dir(bin))
			return false
		}
		return true
	})
}
