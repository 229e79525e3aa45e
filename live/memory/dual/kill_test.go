package dual

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/memory"
)

// The child process of TestKillBetweenWrites reads its mode and directory
// from these variables.
const (
	killModeEnv = "PROOFSITE_MEMORY_KILL_MODE"
	killDirEnv  = "PROOFSITE_MEMORY_KILL_DIR"
)

// The child's modes: where the SIGKILL lands.
const (
	// killAfterPrimary: a Put has committed the memory and its outbox
	// entry to the primary and has not begun the SQL write.
	killAfterPrimary = "after-primary"
	// killInSQLTransaction: the replicator has written rows in an open SQL
	// transaction that has not committed.
	killInSQLTransaction = "in-sql-transaction"
	// killStream: Puts run back to back and the kill lands wherever they
	// are; every Put acknowledged before it must have both writes.
	killStream = "stream"
)

// TestKillBetweenWrites runs the store in a child process (this test
// binary, re-executed), kills it with SIGKILL at a chosen point between or
// inside the two writes, reopens everything in this process, and shows
// that the replicator and the reconciler converge, that every
// acknowledged memory was already in both stores, and that the chain
// still verifies. SIGKILL shows process-crash safety, not power loss.
func TestKillBetweenWrites(t *testing.T) {
	if mode := os.Getenv(killModeEnv); mode != "" {
		killChild(t, mode, os.Getenv(killDirEnv))
		return
	}
	for _, mode := range []string{killAfterPrimary, killInSQLTransaction, killStream} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			createChain(t, filepath.Join(dir, "ledger"))
			lines := runKilledChild(t, mode, dir)

			e := &env{dir: dir, chain: openChain(t, filepath.Join(dir, "ledger"))}
			e.opts.Chain = e.chain
			s := e.open(t)
			ctx := context.Background()
			inSQL := secondarySnapshot(t, s)
			switch mode {
			case killAfterPrimary, killInSQLTransaction:
				id := lines[len(lines)-1]
				if _, err := s.Get(id); err != nil {
					t.Fatalf("the memory committed before the kill is not in the primary: %v", err)
				}
				if _, ok := inSQL[id]; ok {
					t.Fatal("the SQL store holds a memory whose write never committed")
				}
				if pending, _ := s.primary.pending(id); !pending {
					t.Fatal("the memory has no outbox entry")
				}
			case killStream:
				for _, id := range lines {
					if _, ok := inSQL[id]; !ok {
						t.Fatalf("acknowledged memory %s is not in the SQL store", id)
					}
					if _, err := s.Get(id); err != nil {
						t.Fatalf("acknowledged memory %s is not in the primary: %v", id, err)
					}
				}
				t.Logf("%d Puts acknowledged before the kill; the primary holds %d memories, the SQL store %d", len(lines), s.primary.count.Load(), len(inSQL))
			}
			if _, err := s.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			requireConverged(t, s)
			res, err := e.chain.FullWalk(ctx, nil, nil)
			if err != nil || !res.Verdict.Pass() {
				t.Fatalf("chain after the kill: %+v %v", res.Verdict, err)
			}
		})
	}
}

// runKilledChild starts the child in mode on dir, reads the ids it
// reports, SIGKILLs it at the mode's point and returns the ids.
func runKilledChild(t *testing.T, mode, dir string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillBetweenWrites$", "-test.count=1")
	cmd.Env = append(os.Environ(), killModeEnv+"="+mode, killDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var ids []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		kind, id, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "ack":
			ids = append(ids, id)
			if mode != killStream || len(ids) < 25 {
				continue
			}
			// Land anywhere in the Puts that follow.
			time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
		case "ready":
			ids = append(ids, id)
		default:
			continue // the test framework's own lines
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child did not die of SIGKILL: %v\n%s", err, stderr.Bytes())
		}
		return ids
	}
	cmd.Wait()
	t.Fatalf("child ended before reaching %s:\n%s", mode, stderr.Bytes())
	return nil
}

// killChild is the child's side: it opens the chain and the store, works
// until the parent's SIGKILL, and reports on stdout ("ack ID" after each
// acknowledged Put, "ready ID" when it waits at the kill point).
func killChild(t *testing.T, mode, dir string) {
	e := &env{dir: dir, chain: openChain(t, filepath.Join(dir, "ledger"))}
	e.opts.Chain = e.chain
	s := e.open(t)
	ctx := context.Background()
	wait := func(id string) {
		fmt.Printf("ready %s\n", id)
		time.Sleep(time.Hour) // until the SIGKILL
	}
	switch mode {
	case killAfterPrimary:
		s.afterPrimary = func(m memory.Memory) { wait(m.ID) }
		s.Put(ctx, draft("case", 1))
	case killInSQLTransaction:
		s.secondary.fault = func(op string) error {
			if op == "put" {
				return errors.New("injected: the Put's own SQL write fails")
			}
			return nil
		}
		st, _ := s.Put(ctx, draft("case", 1))
		s.secondary.fault = func(op string) error {
			if op == "commit" {
				wait(st.Memory.ID) // the rows are written, not committed
			}
			return nil
		}
		s.Replicate(ctx)
	case killStream:
		for i := 0; ; i++ {
			st, err := s.Put(ctx, draft("case", i))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("ack %s\n", st.Memory.ID)
		}
	}
	t.Fatalf("child: mode %q ended before the kill", mode)
}
