package pgtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

var pg Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Close()
	os.Exit(code)
}

// TestServerStopRestart starts the server, writes a row in a schema of its
// own, stops the server (queries fail), restarts it, and reads the row
// back.
func TestServerStopRestart(t *testing.T) {
	srv := pg.Get(t)
	dsn := srv.NewSchema(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES ('a', 'b')"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping succeeded with the server stopped")
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM kv WHERE k = 'a'").Scan(&v); err != nil || v != "b" {
		t.Fatalf("after restart: %q %v", v, err)
	}
	other := srv.NewSchema(t)
	db2, err := sql.Open("pgx", other)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := db2.ExecContext(ctx, "SELECT 1 FROM kv"); err == nil {
		t.Fatal("a new schema sees another schema's table")
	}
}

func TestBinDirOverride(t *testing.T) {
	t.Setenv("PROOFSITE_PG_BIN", t.TempDir())
	if _, err := BinDir(); err == nil {
		t.Fatal("an empty PROOFSITE_PG_BIN was accepted")
	}
}
