package keystore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

func layout(t *testing.T) Options {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	return Options{Dir: filepath.Join(data, "keys"), WitnessDir: filepath.Join(data, "witness-keys")}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestCreateOpen(t *testing.T) {
	opts := layout(t)
	if _, err := Open(opts); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("open before create: %v, want ErrNoKeys", err)
	}
	created, err := Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		opts.Dir: 0o700, opts.WitnessDir: 0o700,
		filepath.Join(opts.Dir, "writer.pem"):           0o600,
		filepath.Join(opts.WitnessDir, "witness-1.pem"): 0o600,
		filepath.Join(opts.WitnessDir, "witness-2.pem"): 0o600,
	} {
		if got := mode(t, path); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "witness-1.pem")); err == nil {
		t.Error("a witness key was written beside the writer key")
	}
	opened, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := created.Signers(), opened.Signers()
	if a.Writer.ID() != b.Writer.ID() || len(b.Witnesses) != 2 || a.Witnesses[0].ID() != b.Witnesses[0].ID() || a.Witnesses[1].ID() != b.Witnesses[1].ID() {
		t.Fatalf("opened other keys than were created")
	}
	if _, err := Create(opts); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if err := opened.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(opts); err != nil {
		t.Fatalf("Discard of an opened store removed keys: %v", err)
	}
	if err := created.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(opts.Dir)); !os.IsNotExist(err) {
		t.Fatalf("Discard left the folders it made: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		desc  string
		setup func(t *testing.T, opts Options)
		want  string
		is    error
	}{
		{"writer without witnesses", func(t *testing.T, opts Options) {
			os.RemoveAll(opts.WitnessDir)
		}, "no witness keys", ErrIncomplete},
		{"witnesses without writer", func(t *testing.T, opts Options) {
			os.Remove(filepath.Join(opts.Dir, WriterFile))
		}, "restore the writer key", ErrIncomplete},
		{"key readable by others", func(t *testing.T, opts Options) {
			os.Chmod(filepath.Join(opts.WitnessDir, "witness-2.pem"), 0o644)
		}, "readable by others", nil},
		{"not a key", func(t *testing.T, opts Options) {
			os.WriteFile(filepath.Join(opts.Dir, WriterFile), []byte("hello"), 0o600)
		}, "not a PEM", nil},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			opts := layout(t)
			if _, err := Create(opts); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, opts)
			_, err := Open(opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if _, err := Create(opts); err == nil {
				t.Fatal("Create generated keys over a partial set")
			}
		})
	}
	if _, err := Open(Options{Dir: "k", WitnessDir: "k/"}); err == nil || !strings.Contains(err.Error(), "apart") {
		t.Errorf("witness keys in the writer's folder: %v", err)
	}
}

// oldLayout writes keys as the first layout did: every key in Dir.
func oldLayout(t *testing.T, opts Options) ledger.Signers {
	t.Helper()
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var s ledger.Signers
	for _, name := range []string{"writer.pem", "witness-1.pem", "witness-2.pem"} {
		k, err := ledger.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := WritePrivateKey(filepath.Join(opts.Dir, name), k); err != nil {
			t.Fatal(err)
		}
		if name == "writer.pem" {
			s.Writer = k
		} else {
			s.Witnesses = append(s.Witnesses, k)
		}
	}
	return s
}

func TestMigrateOldLayout(t *testing.T) {
	opts := layout(t)
	want := oldLayout(t, opts)
	ks, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	got := ks.Signers()
	if got.Writer.ID() != want.Writer.ID() || len(got.Witnesses) != 2 || got.Witnesses[0].ID() != want.Witnesses[0].ID() || got.Witnesses[1].ID() != want.Witnesses[1].ID() {
		t.Fatal("the migrated keys differ")
	}
	left, _ := os.ReadDir(opts.Dir)
	if len(left) != 1 || left[0].Name() != WriterFile {
		t.Errorf("left in %s: %v", opts.Dir, left)
	}
	if m := mode(t, opts.WitnessDir); m != 0o700 {
		t.Errorf("witness folder mode %v", m)
	}
	if m := mode(t, filepath.Join(opts.WitnessDir, "witness-2.pem")); m != 0o600 {
		t.Errorf("moved key mode %v", m)
	}
	if _, err := Open(opts); err != nil {
		t.Fatalf("open after the move: %v", err)
	}
}

// A move interrupted after copying one key is finished by the next Open.
func TestMigrateInterrupted(t *testing.T) {
	opts := layout(t)
	oldLayout(t, opts)
	os.MkdirAll(opts.WitnessDir, 0o700)
	data, _ := os.ReadFile(filepath.Join(opts.Dir, "witness-1.pem"))
	os.WriteFile(filepath.Join(opts.WitnessDir, "witness-1.pem"), data, 0o600)
	ks, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks.Signers().Witnesses) != 2 {
		t.Fatalf("%d witnesses", len(ks.Signers().Witnesses))
	}
}

func TestMigrateConflict(t *testing.T) {
	opts := layout(t)
	oldLayout(t, opts)
	other, _ := ledger.GenerateKey(nil)
	os.MkdirAll(opts.WitnessDir, 0o700)
	if err := WritePrivateKey(filepath.Join(opts.WitnessDir, "witness-1.pem"), other); err != nil {
		t.Fatal(err)
	}
	_, err := Open(opts)
	if err == nil || !strings.Contains(err.Error(), "move witness-1.pem, witness-2.pem out of "+opts.Dir) {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(opts.Dir); len(entries) != 3 {
		t.Fatal("a refused move changed the old folder")
	}
}

func TestWritePrivateKeyNeverOverwrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.pem")
	k, _ := ledger.GenerateKey(nil)
	if err := WritePrivateKey(path, k); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivateKey(path, k); !errors.Is(err, os.ErrExist) {
		t.Fatalf("got %v, want ErrExist", err)
	}
	back, err := ReadPrivateKey(path)
	if err != nil || back.ID() != k.ID() {
		t.Fatalf("read back %v %v", back.ID(), err)
	}
}

func TestKey(t *testing.T) {
	opts := layout(t)
	ks, err := Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ks.Key("nodes/s1")
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(opts.Dir, "nodes", "s1.pem")); m != 0o600 {
		t.Errorf("key mode %v", m)
	}
	if m := mode(t, filepath.Join(opts.Dir, "nodes")); m != 0o700 {
		t.Errorf("folder mode %v", m)
	}
	reopened, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := reopened.Key("nodes/s1")
	if err != nil || b.ID() != a.ID() {
		t.Fatalf("the key changed on the second use: %v", err)
	}
	if c, _ := reopened.Key("checkpoint"); c.ID() == a.ID() {
		t.Error("two names gave one key")
	}
	for _, name := range []string{"writer", "witness-1", "../escape", "nodes/s1/deeper", "Nodes/S1", ""} {
		if _, err := reopened.Key(name); err == nil {
			t.Errorf("Key(%q) was accepted", name)
		}
	}
}
