package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is a server process the harness started and must stop again.
type proc struct {
	name string
	log  string // file holding its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // Wait's result; read only after done
}

// startProc starts argv with env in a process group of its own (so a
// terminal's Ctrl-C reaches the harness, which stops it in order), writing
// its output to logPath. If the harness dies without stopping it, the
// kernel sends it SIGTERM.
func startProc(name, logPath string, env []string, argv ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// pgid is the process group the process leads, with anything it started.
func (p *proc) pgid() int { return p.cmd.Process.Pid }

// stop asks the process group to terminate, and kills it after grace.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.pgid()
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not stop within %s; killed", p.name, grace)
}

// waitReady polls url until it answers 200, the process exits, or timeout.
func (p *proc) waitReady(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%v); see %s", p.name, p.err, p.log)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready at %s after %s; see %s", p.name, url, timeout, p.log)
			}
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago; all n are held open together so none is handed out twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
