// Package pgtest runs a throwaway PostgreSQL server for tests: Debian's
// binaries, a fresh cluster (initdb) in a temporary directory, listening
// only on a unix socket in that directory, with trust authentication for
// the "postgres" user. When the process runs as root the server runs as
// the "postgres" system user (PostgreSQL refuses root).
//
//	var pg pgtest.Shared                      // one server per test binary
//	func TestMain(m *testing.M) { code := m.Run(); pg.Close(); os.Exit(code) }
//	func TestX(t *testing.T) { dsn := pg.Get(t).NewSchema(t) … }
//
// The server dies with the test process (Pdeathsig), so a crashed or
// killed test leaves no server behind. A missing PostgreSQL fails the
// test with a message saying how to install it; it never skips.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Install is the command that installs PostgreSQL where it is missing.
const Install = "make test runs .ci/install-postgres; by hand: apt-get install -y postgresql"

// ErrNotFound reports that no PostgreSQL server binaries were found.
var ErrNotFound = errors.New("pgtest: PostgreSQL not found (looked in $PROOFSITE_PG_BIN, /usr/lib/postgresql/*/bin and $PATH); " + Install)

// BinDir returns the directory holding initdb and postgres:
// $PROOFSITE_PG_BIN when set, else the newest /usr/lib/postgresql/N/bin
// (Debian keeps them off $PATH), else the directory of initdb on $PATH.
func BinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv("PROOFSITE_PG_BIN"); dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("pgtest: PROOFSITE_PG_BIN=%s holds no initdb and postgres", dir)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", ErrNotFound
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Server is a running (or stopped) throwaway server.
type Server struct {
	root    string // removed by Close
	data    string
	socket  string // directory of the unix socket
	bin     string
	logPath string
	cred    *syscall.Credential // nil: run as ourselves

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	schemas atomic.Int64
}

// Start creates a cluster in a new temporary directory and starts the
// server on a unix socket in it. It returns once the server accepts
// connections.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	base := os.TempDir()
	if len(base) > 60 { // a unix socket path has at most 107 bytes
		base = "/tmp"
	}
	root, err := os.MkdirTemp(base, "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{root: root, data: filepath.Join(root, "data"), socket: filepath.Join(root, "run"), bin: bin, logPath: filepath.Join(root, "postgres.log")}
	if err := s.setup(ctx); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	if err := s.Restart(ctx); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	return s, nil
}

// setup runs initdb, as the postgres user when we are root.
func (s *Server) setup(ctx context.Context) error {
	if err := os.Mkdir(s.socket, 0o755); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root and there is no \"postgres\" user to run the server as (%v); %s", err, Install)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		// The postgres user must reach the directory and own what the
		// server writes.
		if err := os.Chmod(s.root, 0o755); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		for _, dir := range []string{s.root, s.socket} {
			if err := os.Chown(dir, uid, gid); err != nil {
				return fmt.Errorf("pgtest: %w", err)
			}
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"),
		"-D", s.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// Restart starts the server (again, after Stop) and waits until it
// accepts connections.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: server already running")
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data, "-k", s.socket,
		"-c", "listen_addresses=", "-c", "port=5432", "-c", "max_connections=60",
		"-c", "shared_buffers=32MB", "-c", "fsync=on", "-c", "synchronous_commit=on")
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGQUIT is PostgreSQL's immediate shutdown: the server goes with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited

	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("pgtest: postgres exited at start: %s", s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres does not answer after 60s: %v\n%s", err, s.logTail())
		}
	}
}

// Stop shuts the server down (fast shutdown: open connections are cut)
// and waits for it to exit. Restart brings it back with its data.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pgtest: stop: %w", err)
	}
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
	return nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.root))
}

// DSN returns the keyword/value DSN of database on this server, for the
// pgx driver (or libpq).
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.socket, database)
}

// NewSchema creates an empty schema for tb and returns a DSN whose
// connections use it (search_path), so tests sharing the server do not
// see each other's tables. It fails tb when the server does not answer.
func (s *Server) NewSchema(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.schemas.Add(1))
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		tb.Fatalf("pgtest: create schema: %v", err)
	}
	return s.DSN("postgres") + " search_path=" + name
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// Shared starts one server for a test binary, on first use, and fails
// every test that asks for it when it cannot start. The zero value is
// ready; call Close from TestMain after m.Run.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on the first call.
func (sh *Shared) Get(tb testing.TB) *Server {
	tb.Helper()
	sh.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sh.srv, sh.err = Start(ctx)
	})
	if sh.err != nil {
		tb.Fatalf("PostgreSQL is required for this test and could not be started: %v", sh.err)
	}
	return sh.srv
}

// Close stops the shared server if it was started.
func (sh *Shared) Close() {
	if sh.srv != nil {
		if err := sh.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}
