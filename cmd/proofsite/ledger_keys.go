package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/ledger"
)

// The key files in the data directory:
//
//	keys/writer.pem, keys/witness-1.pem, keys/witness-2.pem   private, PKCS #8 PEM, mode 0600
//	keys.json                                                 public, ledger.KeysDocument
const (
	keysDirName     = "keys"
	keysJSONName    = "keys.json"
	writerKeyFile   = "writer.pem"
	witnessPrefix   = "witness-"
	defaultWitnesss = 2
)

// loadSigners reads the private keys of this instance.
func loadSigners(dataDir string) (ledger.Signers, error) {
	dir := filepath.Join(dataDir, keysDirName)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ledger.Signers{}, fmt.Errorf("no keys in %s (run \"proofsite ledger init\")", dir)
	}
	if err != nil {
		return ledger.Signers{}, err
	}
	var s ledger.Signers
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".pem") {
			continue
		}
		k, err := readPrivateKey(filepath.Join(dir, name))
		if err != nil {
			return ledger.Signers{}, err
		}
		switch {
		case name == writerKeyFile:
			s.Writer = k
		case strings.HasPrefix(name, witnessPrefix):
			s.Witnesses = append(s.Witnesses, k)
		}
	}
	if s.Writer.ID() == "" {
		return ledger.Signers{}, fmt.Errorf("no %s in %s", writerKeyFile, dir)
	}
	return s, nil
}

func readPrivateKey(path string) (ledger.PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return ledger.PrivateKey{}, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return ledger.PrivateKey{}, fmt.Errorf("%s: private key is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ledger.PrivateKey{}, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return ledger.PrivateKey{}, fmt.Errorf("%s: not a PEM \"PRIVATE KEY\"", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("%s: %w", path, err)
	}
	ed, ok := key.(ed25519.PrivateKey)
	if !ok {
		return ledger.PrivateKey{}, fmt.Errorf("%s: not an ed25519 key", path)
	}
	k, err := ledger.NewPrivateKey(ed)
	if err != nil {
		return ledger.PrivateKey{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// createKeys generates a writer and witnesses and writes them to
// dataDir/keys, all or nothing (staged in a temporary directory, then
// renamed). It fails if the keys directory exists.
func createKeys(dataDir string) (ledger.Signers, error) {
	dir := filepath.Join(dataDir, keysDirName)
	if _, err := os.Stat(dir); err == nil {
		return ledger.Signers{}, fmt.Errorf("%s exists", dir)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return ledger.Signers{}, err
	}
	tmp, err := os.MkdirTemp(dataDir, ".keys.tmp-")
	if err != nil {
		return ledger.Signers{}, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o700); err != nil {
		return ledger.Signers{}, err
	}
	var s ledger.Signers
	write := func(name string) (ledger.PrivateKey, error) {
		k, err := ledger.GenerateKey(nil)
		if err != nil {
			return k, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k.Ed25519())
		if err != nil {
			return k, err
		}
		return k, writeFileSync(filepath.Join(tmp, name), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	}
	if s.Writer, err = write(writerKeyFile); err != nil {
		return ledger.Signers{}, err
	}
	for i := 1; i <= defaultWitnesss; i++ {
		w, err := write(fmt.Sprintf("%s%d.pem", witnessPrefix, i))
		if err != nil {
			return ledger.Signers{}, err
		}
		s.Witnesses = append(s.Witnesses, w)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return ledger.Signers{}, err
	}
	return s, nil
}

// writeTrustDocument publishes the trust document as dataDir/keys.json.
func writeTrustDocument(dataDir string, doc ledger.TrustDocument) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dataDir, keysJSONName), append(data, '\n'), 0o644)
}

// readTrustFile reads a trust document (or the legacy keys.json form) and
// checks it.
func readTrustFile(path string) (ledger.TrustDocument, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ledger.TrustDocument{}, err
	}
	doc, err := ledger.ParseTrustDocument(data)
	if err != nil {
		return ledger.TrustDocument{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Keys) == 0 {
		return ledger.TrustDocument{}, fmt.Errorf("%s: no keys", path)
	}
	return doc, nil
}

// readKeysFile reads the keys of a trust document (or keys.json).
func readKeysFile(path string) (ledger.KeySet, error) {
	doc, err := readTrustFile(path)
	if err != nil {
		return ledger.KeySet{}, err
	}
	return ledger.NewKeySet(doc.Keys)
}

// writeFileAtomic writes through a synced temporary file and a rename, so
// readers see the old file or the new one, never a part.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := createAtomic(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// atomicFile is a file written under a temporary name and renamed into place
// by Commit; Abort (or a failed Commit) removes it.
type atomicFile struct {
	*os.File
	path string
	done bool
}

func createAtomic(path string, perm os.FileMode) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &atomicFile{File: f, path: path}, nil
}

// Commit syncs, closes and renames the file into place.
func (a *atomicFile) Commit() error {
	if a.done {
		return errors.New("atomic file already closed")
	}
	a.done = true
	err := a.Sync()
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.Name())
	}
	return err
}

// Abort removes the temporary file unless Commit ran.
func (a *atomicFile) Abort() {
	if !a.done {
		a.done = true
		a.Close()
		os.Remove(a.Name())
	}
}

func writeFileSync(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
