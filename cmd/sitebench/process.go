package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// sample is what one run of a build process cost.
type sample struct {
	Wall   time.Duration // from start to exit, as seen by the parent
	CPU    time.Duration // user + system time of the process and its threads
	MaxRSS int64         // peak resident set size in KiB (getrusage Maxrss)
}

// measure runs cmd to completion and returns its cost. A failed run is an
// error carrying the tail of its output.
func measure(cmd *exec.Cmd) (sample, error) {
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w\n%s", commandLine(cmd), err, out.String())
	}
	st := cmd.ProcessState
	return sample{Wall: wall, CPU: st.UserTime() + st.SystemTime(), MaxRSS: maxRSS(st)}, nil
}

// startQuiet starts cmd with its output appended to logFile.
func startQuiet(cmd *exec.Cmd, logFile string) error {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", commandLine(cmd), err)
	}
	// The child holds its own copy of the descriptor.
	return f.Close()
}

// stopProcess asks cmd's process to stop (SIGINT, as Ctrl-C in a terminal),
// waits up to grace for exited to be closed, then kills it.
func stopProcess(ctx context.Context, cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	cmd.Process.Kill()
	<-exited
}

func commandLine(cmd *exec.Cmd) string { return strings.Join(cmd.Args, " ") }

// tailBuffer keeps the last few KiB written to it: enough to explain a
// failure without holding a chatty build's whole log.
type tailBuffer struct{ b bytes.Buffer }

const tailSize = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if t.b.Len() > 2*tailSize {
		rest := t.b.Bytes()[t.b.Len()-tailSize:]
		t.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.b.String() }
