package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// crashChildEnv names the store directory a re-executed test binary appends
// to until it is killed; crashClientsEnv, how many goroutines append at
// once (1 when unset).
const (
	crashChildEnv   = "PROOFSITE_STORE_CRASH_CHILD"
	crashClientsEnv = "PROOFSITE_STORE_CRASH_CLIENTS"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		clients, _ := strconv.Atoi(os.Getenv(crashClientsEnv))
		os.Exit(crashChild(dir, max(clients, 1)))
	}
	code := m.Run()
	removeBuiltCommands()
	os.Exit(code)
}

// crashChild appends blocks from clients goroutines at once and prints
// each index once AppendEntry has returned, that is once the block is
// acknowledged as durable. It stops by itself after a while in case the
// parent never kills it.
func crashChild(dir string, clients int) int {
	signers := testSigners()
	s, err := Open(dir, Options{Keys: signers.KeySet(), Seams: testSeams})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	deadline := time.Now().Add(30 * time.Second)
	var out sync.Mutex
	var failed atomic.Bool
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline) && !failed.Load(); i++ {
				b, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "crash_test", Payload: fmt.Appendf(nil, `{"c":%d,"i":%d}`, c, i)}, signers)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
					return
				}
				out.Lock()
				fmt.Fprintln(os.Stdout, b.Index()) // one write(2), after the synced commit
				out.Unlock()
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 1
	}
	return 0
}

// TestCrashSafety kills a real child process (SIGKILL) while it appends, many
// times over, and checks after each kill that every block the child
// acknowledged is in the reopened store and that the chain verifies.
//
// This proves process-crash safety: what a synced commit put in the
// operating system survives the process dying at any instruction. It does
// not prove power-loss safety, which depends on the disk honouring fsync and
// cannot be shown by killing a process.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	t.Run("one client", func(t *testing.T) { t.Parallel(); crashRounds(t, 1, 20) })
	// Group commit: acknowledged appends of one batch are all synced, and
	// the chain, its stored Merkle tree and count agree after any kill.
	t.Run("32 clients", func(t *testing.T) { t.Parallel(); crashRounds(t, 32, 4) })
}

// crashRounds kills a child appending from clients goroutines rounds
// times, reopening and checking the store after each kill.
func crashRounds(t *testing.T, clients, rounds int) {
	signers := testSigners()
	blocks, privs, err := ledger.SealHistory(history(200, seamLinks()), signers)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ledger")
	opts := Options{Keys: signers.KeySet(), Seams: testSeams}
	if _, err := Create(dir, blocks, privs, opts); err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		acked := runAndKill(t, dir, clients, 2+round%9*clients)
		s, err := Open(dir, opts)
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		for _, i := range acked {
			if _, err := s.BlockByIndex(i); err != nil {
				s.Close()
				t.Fatalf("round %d: acknowledged block %d lost: %v", round, i, err)
			}
		}
		res, err := s.FullWalk(context.Background(), nil, nil)
		if err != nil || !res.Verdict.CanonicalSpineValid || res.Verdict.Verdict != ledger.VerdictPassWithSeam {
			s.Close()
			t.Fatalf("round %d: chain after kill: %+v %v", round, res.Verdict, err)
		}
		if last := slices.Max(acked); s.Head().Index() < last {
			t.Fatalf("round %d: head %d behind acknowledged %d", round, s.Head().Index(), last)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// runAndKill starts the child with clients appending goroutines, kills it
// with SIGKILL as soon as it has acknowledged n blocks (it is in the middle
// of further appends by then), and returns every index it acknowledged
// before dying.
func runAndKill(t *testing.T, dir string, clients, n int) []int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashClientsEnv+"="+strconv.Itoa(clients))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []int64
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		i, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			t.Fatalf("child said %q", sc.Text())
		}
		acked = append(acked, i)
		if len(acked) == n && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed || err == nil {
		t.Fatalf("child exited by itself (%v) after %d blocks", err, len(acked))
	}
	return acked
}
