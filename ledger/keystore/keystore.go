// Package keystore keeps the private keys of this instance: the chain's
// writer key and its witness keys, each an ed25519 key in a PKCS #8 PEM
// file of mode 0600 in a folder of mode 0700.
//
// The writer key lives in Dir (by default data/keys/writer.pem); the
// witness keys live apart, in WitnessDir (by default
// data/witness-keys/witness-N.pem), so that they can sit on another disk or
// a host mount and a copy of one folder is not a copy of every signer.
// Other keys of this instance (a node's receipt key, a checkpoint key) live
// in Dir too, each in a file of its own named by the caller: Key("nodes/s1")
// reads Dir/nodes/s1.pem, generating it on first use.
//
//	ks, err := keystore.Open(keystore.Options{Dir: "data/keys", WitnessDir: "data/witness-keys"})
//	if errors.Is(err, keystore.ErrNoKeys) {
//		ks, err = keystore.Create(opts) // first start: generate them
//	}
//	signers := ks.Signers()
//
// An older layout kept the witness keys beside the writer key
// (data/keys/witness-N.pem). Open moves them to WitnessDir, copying and
// syncing each before it removes the original, and refuses, saying what to
// move, when both folders hold witness keys that differ.
package keystore

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/ledger"
)

// The key files.
const (
	// WriterFile is the writer key's file in Dir.
	WriterFile = "writer.pem"
	// WitnessPrefix starts every witness key's file in WitnessDir:
	// witness-1.pem, witness-2.pem, ...
	WitnessPrefix = "witness-"
	// DefaultWitnesses is how many witness keys Create makes by default.
	DefaultWitnesses = 2
)

// Errors of the key store.
var (
	// ErrNoKeys reports that neither folder holds a key: a first start.
	ErrNoKeys = errors.New("keystore: no keys")
	// ErrExists reports that Create found keys already there.
	ErrExists = errors.New("keystore: keys exist")
	// ErrIncomplete reports a key set with a part missing (a writer key
	// without witness keys, or the reverse); nothing is generated over it.
	ErrIncomplete = errors.New("keystore: incomplete key set")
)

// Options say where the keys are. Dir and WitnessDir are required and must
// differ.
type Options struct {
	// Dir holds the writer key (and later keys of this instance).
	Dir string
	// WitnessDir holds the witness keys.
	WitnessDir string
	// Witnesses is how many witness keys Create makes; 0 means
	// DefaultWitnesses.
	Witnesses int
	// Logger receives what Open and Create change on disk (a migration, new
	// keys); nil discards.
	Logger *slog.Logger
}

func (o *Options) fill() error {
	if o.Dir == "" || o.WitnessDir == "" {
		return errors.New("keystore: Dir and WitnessDir are required")
	}
	if filepath.Clean(o.Dir) == filepath.Clean(o.WitnessDir) {
		return fmt.Errorf("keystore: the witness keys must be kept apart from the writer key, not in %s too", o.Dir)
	}
	if o.Witnesses == 0 {
		o.Witnesses = DefaultWitnesses
	}
	if o.Witnesses < 0 {
		return fmt.Errorf("keystore: %d witnesses", o.Witnesses)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Keystore is a loaded set of keys.
type Keystore struct {
	opts    Options
	signers ledger.Signers
	created []string // files and folders Create made, for Discard
}

// Signers returns the writer and witness keys.
func (k *Keystore) Signers() ledger.Signers { return k.signers }

// Open loads the keys, moving witness keys of the older layout first. It
// fails with ErrNoKeys when there are none, and with ErrIncomplete when a
// part of the set is missing.
func Open(opts Options) (*Keystore, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := migrate(opts); err != nil {
		return nil, err
	}
	writerPath := filepath.Join(opts.Dir, WriterFile)
	witnesses, err := witnessFiles(opts.WitnessDir)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(writerPath)
	hasWriter := statErr == nil
	switch {
	case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
		return nil, fmt.Errorf("keystore: %w", statErr)
	case !hasWriter && len(witnesses) == 0:
		return nil, fmt.Errorf("%w in %s and %s", ErrNoKeys, opts.Dir, opts.WitnessDir)
	case !hasWriter:
		return nil, fmt.Errorf("%w: %s holds witness keys but there is no %s; restore the writer key before anything is generated", ErrIncomplete, opts.WitnessDir, writerPath)
	case len(witnesses) == 0:
		return nil, fmt.Errorf("%w: no witness keys (%s*.pem) in %s; is the folder (or its mount) there?", ErrIncomplete, WitnessPrefix, opts.WitnessDir)
	}
	var s ledger.Signers
	if s.Writer, err = ReadPrivateKey(writerPath); err != nil {
		return nil, err
	}
	for _, name := range witnesses {
		w, err := ReadPrivateKey(filepath.Join(opts.WitnessDir, name))
		if err != nil {
			return nil, err
		}
		s.Witnesses = append(s.Witnesses, w)
	}
	return &Keystore{opts: opts, signers: s}, nil
}

// Create generates a writer key and opts.Witnesses witness keys and writes
// them, creating the folders (mode 0700) as needed. It fails with ErrExists
// when either folder already holds a key, and leaves nothing behind when it
// fails.
func Create(opts Options) (_ *Keystore, err error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	for _, dir := range []string{opts.Dir, opts.WitnessDir} {
		found, err := pemFiles(dir)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			return nil, fmt.Errorf("%w: %s holds %s", ErrExists, dir, strings.Join(found, ", "))
		}
	}
	k := &Keystore{opts: opts}
	defer func() {
		if err != nil {
			k.Discard()
		}
	}()
	for _, dir := range []string{opts.Dir, opts.WitnessDir} {
		made, err := mkdirAll(dir)
		if err != nil {
			return nil, fmt.Errorf("keystore: %w", err)
		}
		k.created = append(k.created, made...)
	}
	write := func(dir, name string) (ledger.PrivateKey, error) {
		key, err := ledger.GenerateKey(nil)
		if err != nil {
			return key, err
		}
		path := filepath.Join(dir, name)
		if err := WritePrivateKey(path, key); err != nil {
			return key, err
		}
		k.created = append(k.created, path)
		return key, nil
	}
	for i := 1; i <= opts.Witnesses; i++ {
		w, err := write(opts.WitnessDir, fmt.Sprintf("%s%d.pem", WitnessPrefix, i))
		if err != nil {
			return nil, err
		}
		k.signers.Witnesses = append(k.signers.Witnesses, w)
	}
	// The writer key last: a set without it is not mistaken for a whole one.
	if k.signers.Writer, err = write(opts.Dir, WriterFile); err != nil {
		return nil, err
	}
	for _, dir := range []string{opts.WitnessDir, opts.Dir} {
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	opts.Logger.Info("generated keys", "writer", k.signers.Writer.ID(), "dir", opts.Dir, "witnesses", opts.Witnesses, "witness_dir", opts.WitnessDir)
	return k, nil
}

// keyName is the name of another key of the instance: one or two path
// segments of a-z 0-9 and -, e.g. "checkpoint" or "nodes/s1".
var keyName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)?$`)

// Key returns the instance's key called name (e.g. "checkpoint",
// "nodes/s1"), kept in Dir/name.pem and generated, written and synced on
// first use. The writer and witness keys are not reachable this way. Key is
// not safe for concurrent use with itself.
func (k *Keystore) Key(name string) (ledger.PrivateKey, error) {
	if !keyName.MatchString(name) || name+".pem" == WriterFile || strings.HasPrefix(name, WitnessPrefix) {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %q is not a key name (a-z 0-9 -, at most one /; not the writer or a witness)", name)
	}
	path := filepath.Join(k.opts.Dir, filepath.FromSlash(name)+".pem")
	key, err := ReadPrivateKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if _, err := mkdirAll(filepath.Dir(path)); err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %w", err)
	}
	if key, err = ledger.GenerateKey(nil); err != nil {
		return key, err
	}
	if err := WritePrivateKey(path, key); err != nil {
		return ledger.PrivateKey{}, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return ledger.PrivateKey{}, err
	}
	k.opts.Logger.Info("generated a key", "name", name, "key_id", key.ID(), "file", path)
	return key, nil
}

// Discard removes what Create wrote (key files, then the folders it made),
// for undoing a first start that failed. It does nothing to a Keystore
// that Open loaded.
func (k *Keystore) Discard() error {
	var errs []error
	for _, p := range slices.Backward(k.created) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	k.created = nil
	return errors.Join(errs...)
}

// migrate moves witness keys of the older layout (in Dir) to WitnessDir:
// each is copied and synced first, then the originals are removed. An
// interrupted move is finished on the next Open. Differing keys in both
// folders are refused.
func migrate(opts Options) error {
	old, err := witnessFiles(opts.Dir)
	if err != nil || len(old) == 0 {
		return err
	}
	current, err := witnessFiles(opts.WitnessDir)
	if err != nil {
		return err
	}
	for _, name := range current {
		if !slices.Contains(old, name) {
			return conflict(opts, old)
		}
	}
	if _, err := mkdirAll(opts.WitnessDir); err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	for _, name := range old {
		from, to := filepath.Join(opts.Dir, name), filepath.Join(opts.WitnessDir, name)
		data, err := readKeyFile(from)
		if err != nil {
			return err
		}
		if have, err := os.ReadFile(to); err == nil {
			if !bytes.Equal(have, data) {
				return conflict(opts, old)
			}
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keystore: %w", err)
		}
		if err := writeFileSync(to, data); err != nil {
			return err
		}
	}
	if err := syncDir(opts.WitnessDir); err != nil {
		return err
	}
	for _, name := range old {
		if err := os.Remove(filepath.Join(opts.Dir, name)); err != nil {
			return fmt.Errorf("keystore: %w", err)
		}
	}
	if err := syncDir(opts.Dir); err != nil {
		return err
	}
	opts.Logger.Warn("moved the witness keys apart from the writer key", "from", opts.Dir, "to", opts.WitnessDir, "files", strings.Join(old, ", "))
	return nil
}

func conflict(opts Options, old []string) error {
	return fmt.Errorf("keystore: both %s (the older layout) and %s hold witness keys, and they differ; "+
		"keep the set that signs your chain in %s and move %s out of %s", opts.Dir, opts.WitnessDir, opts.WitnessDir, strings.Join(old, ", "), opts.Dir)
}

// witnessFiles lists the witness key files in dir, sorted by name (the
// order the witnesses sign in).
func witnessFiles(dir string) ([]string, error) {
	found, err := pemFiles(dir)
	return slices.DeleteFunc(found, func(name string) bool { return !strings.HasPrefix(name, WitnessPrefix) }), err
}

// pemFiles lists the .pem files in dir, sorted; a missing dir has none.
func pemFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".pem") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// ReadPrivateKey reads an ed25519 private key from a PKCS #8 PEM file that
// only its owner can read.
func ReadPrivateKey(path string) (ledger.PrivateKey, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return ledger.PrivateKey{}, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %s: not a PEM \"PRIVATE KEY\"", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %s: %w", path, err)
	}
	ed, ok := key.(ed25519.PrivateKey)
	if !ok {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %s: not an ed25519 key", path)
	}
	k, err := ledger.NewPrivateKey(ed)
	if err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("keystore: %s: %w", path, err)
	}
	return k, nil
}

// readKeyFile reads a key file after checking that no one but its owner
// can read it.
func readKeyFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("keystore: %s: private key is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	return data, nil
}

// WritePrivateKey writes k to a new file at path (PKCS #8 PEM, mode 0600,
// synced). An existing file is never overwritten: the error matches
// fs.ErrExist.
func WritePrivateKey(path string, k ledger.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.Ed25519())
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	return writeFileSync(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// writeFileSync creates path exclusively with mode 0600 and syncs it; a
// failed write removes it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("keystore: %w", err)
	}
	return nil
}

// mkdirAll creates dir and its missing parents with mode 0700 and returns
// the folders it made, outermost first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	for _, d := range missing {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return missing, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("keystore: sync %s: %w", dir, err)
	}
	return nil
}
