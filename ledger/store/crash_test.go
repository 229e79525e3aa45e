package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// crashChildEnv names the store directory a re-executed test binary appends
// to until it is killed.
const crashChildEnv = "PROOFSITE_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

// crashChild appends blocks in a loop and prints each index once Append
// has returned, that is once the block is acknowledged as durable. It
// stops by itself after a while in case the parent never kills it.
func crashChild(dir string) int {
	signers := testSigners()
	s, err := Open(dir, Options{Keys: signers.KeySet(), Seams: testSeams})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		b, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "crash_test", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))}, signers)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(os.Stdout, b.Index()) // one write(2), after the synced commit
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
	const rounds = 20
	for round := range rounds {
		acked := runAndKill(t, dir, 2+round%9)
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
		if last := acked[len(acked)-1]; s.Head().Index() < last {
			t.Fatalf("round %d: head %d behind acknowledged %d", round, s.Head().Index(), last)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// runAndKill starts the child, kills it with SIGKILL as soon as it has
// acknowledged n blocks (it is in the middle of the next append by then),
// and returns every index it acknowledged before dying.
func runAndKill(t *testing.T, dir string, n int) []int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
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
