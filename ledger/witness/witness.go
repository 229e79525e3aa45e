// Package witness is a minimal C2SP tlog-witness: a second party that
// cosigns a log's checkpoints only if each one extends the last it
// cosigned, and the log's side of the protocol, which submits checkpoints
// with consistency proofs and collects the cosignatures.
//
//	w, err := witness.New(witness.Options{Name: "witness.example/w1", Key: key, StateFile: "state.json",
//		Logs: map[string]string{"proof.example/ledger": logVerifierKey}})
//	http.Handle("/", w)                         // POST /add-checkpoint
//	vkey := w.VerifierKey()                     // what logs and verifiers pin
//
//	c := witness.Client{URL: "https://witness.example/", VerifierKey: vkey}
//	lines, err := c.Cosign(ctx, signedNote, proofFrom)  // the cosignature lines
//
// Cosignatures are Ed25519 cosignature/v1 (c2sp.org/tlog-cosignature),
// made and checked by github.com/transparency-dev/formats/note; the
// checkpoint notes by golang.org/x/mod/sumdb/note. A Witness keeps, per
// log, the size and root it last cosigned in its state file, checked and
// replaced under one lock and synced to disk before it answers.
package witness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"
	"github.com/proofsite/proofsite/ledger/tlog"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// AddCheckpointPath is the witness's submission endpoint, under its prefix.
const AddCheckpointPath = "add-checkpoint"

// maxRequest bounds an add-checkpoint body: 63 proof lines and a note.
const maxRequest = 16 << 10

// Errors of the package.
var (
	// ErrRefused reports a witness that refused to cosign.
	ErrRefused = errors.New("witness: refused")
	// ErrConflict reports a witness whose last cosigned size is not the
	// one the request assumed (HTTP 409); Conflict.Size says which it is.
	ErrConflict = errors.New("witness: size conflict")
)

// Options configure a Witness.
type Options struct {
	// Name is the witness's key name, e.g. "witness.example/w1". Required.
	Name string
	// Key is the witness's private key. Required.
	Key ed25519.PrivateKey
	// StateFile keeps, per log origin, what was last cosigned. Required.
	StateFile string
	// Logs maps each log origin the witness serves to its note verifier
	// key. Required.
	Logs map[string]string
	// Logger receives refusals; nil discards.
	Logger *slog.Logger
}

// record is what the witness keeps of one log.
type record struct {
	Size uint64 `json:"size"`
	Root string `json:"root"` // base64
}

// Witness answers add-checkpoint.
type Witness struct {
	opts   Options
	signer note.Signer
	vkey   string
	logs   map[string]note.Verifier
	log    *slog.Logger

	mu    sync.Mutex
	state map[string]record
}

// New returns a witness with the state in opts.StateFile (none yet is an
// empty state).
func New(opts Options) (*Witness, error) {
	if opts.Name == "" || len(opts.Key) != ed25519.PrivateKeySize || opts.StateFile == "" || len(opts.Logs) == 0 {
		return nil, errors.New("witness: Name, Key, StateFile and Logs are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Witness{opts: opts, logs: map[string]note.Verifier{}, state: map[string]record{}, log: opts.Logger}
	pub := opts.Key.Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(opts.Name, pub)
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	if w.vkey, err = fnote.VKeyToCosignatureV1(vkey); err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	hash, _, _ := strings.Cut(strings.TrimPrefix(vkey, opts.Name+"+"), "+")
	skey := "PRIVATE+KEY+" + opts.Name + "+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, opts.Key.Seed()...))
	s, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	w.signer = s
	for origin, key := range opts.Logs {
		v, err := note.NewVerifier(key)
		if err != nil || v.Name() != origin {
			return nil, fmt.Errorf("witness: log %q: its key %q is not a note verifier key of that name", origin, key)
		}
		w.logs[origin] = v
	}
	data, err := os.ReadFile(opts.StateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("witness: %w", err)
	default:
		if err := json.Unmarshal(data, &w.state); err != nil {
			return nil, fmt.Errorf("witness: state %s: %w", opts.StateFile, err)
		}
	}
	return w, nil
}

// VerifierKey returns the witness's cosignature/v1 verifier key: what a
// log submits to and a verifier pins ("<name>+<hash>+<base64(0x04 || key)>").
func (w *Witness) VerifierKey() string { return w.vkey }

// ServeHTTP answers POST add-checkpoint (under any prefix) as
// c2sp.org/tlog-witness says: 200 with the cosignature line, 400 for a
// malformed request or an old size above the checkpoint's, 403 for a
// signature that is missing or does not verify, 404 for an unknown log,
// 409 (with the size it last cosigned, text/x.tlog.size) for an old size
// that is not that one, 422 for a proof that does not verify.
func (w *Witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/"+AddCheckpointPath) {
		http.NotFound(rw, r)
		return
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "add-checkpoint takes POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		http.Error(rw, "request body unreadable or too large", http.StatusBadRequest)
		return
	}
	status, answer := w.add(body)
	if status == http.StatusConflict {
		rw.Header().Set("Content-Type", "text/x.tlog.size")
	} else {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	rw.WriteHeader(status)
	io.WriteString(rw, answer)
}

// add checks one add-checkpoint body and cosigns it; it returns the HTTP
// status and body.
func (w *Witness) add(body []byte) (int, string) {
	oldSize, proof, signed, err := parseRequest(body)
	if err != nil {
		return http.StatusBadRequest, err.Error() + "\n"
	}
	text, _ := tlog.SplitNote(signed)
	cp, err := tlog.ParseBody(text)
	if err != nil {
		return http.StatusBadRequest, err.Error() + "\n"
	}
	v, ok := w.logs[cp.Origin]
	if !ok {
		return http.StatusNotFound, "unknown log\n"
	}
	if _, err := note.Open(signed, note.VerifierList(v)); err != nil {
		return http.StatusForbidden, "no valid signature by the log's key\n"
	}
	if oldSize > cp.Size {
		return http.StatusBadRequest, "old size above the checkpoint's\n"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	last := w.state[cp.Origin]
	if oldSize != last.Size {
		return http.StatusConflict, strconv.FormatUint(last.Size, 10) + "\n"
	}
	switch {
	case cp.Size == 0 && cp.Root != tlog.EmptyRoot():
		return http.StatusUnprocessableEntity, "an empty tree has the empty root\n"
	case oldSize == 0 && len(proof) > 0:
		return http.StatusUnprocessableEntity, "no proof from the empty tree\n"
	case oldSize > 0:
		root, _ := base64.StdEncoding.DecodeString(last.Root)
		if err := tlog.VerifyConsistency(oldSize, cp.Size, proof, tlog.Hash(root), cp.Root); err != nil {
			w.log.Warn("refused a checkpoint that does not extend the last one cosigned", "origin", cp.Origin, "old", oldSize, "size", cp.Size, "err", err)
			return http.StatusUnprocessableEntity, "the checkpoint does not extend the last one cosigned\n"
		}
	}
	next := map[string]record{}
	for k, r := range w.state {
		next[k] = r
	}
	next[cp.Origin] = record{Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:])}
	data, _ := json.MarshalIndent(next, "", "  ")
	if err := renameio.WriteFile(w.opts.StateFile, append(data, '\n'), 0o644); err != nil {
		w.log.Error("persisting the witness state", "err", err)
		return http.StatusInternalServerError, "cannot persist the state\n"
	}
	w.state = next
	cosigned, err := note.Sign(&note.Note{Text: string(text)}, w.signer)
	if err != nil {
		return http.StatusInternalServerError, "cannot sign\n"
	}
	_, sigs, _ := bytes.Cut(cosigned, []byte("\n\n"))
	return http.StatusOK, string(sigs)
}

// parseRequest splits an add-checkpoint body: "old N", proof lines, an
// empty line, the signed checkpoint.
func parseRequest(body []byte) (uint64, tlog.Proof, []byte, error) {
	head, signed, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return 0, nil, nil, errors.New("no empty line before the checkpoint")
	}
	lines := strings.Split(string(head), "\n")
	n, ok := strings.CutPrefix(lines[0], "old ")
	size, err := strconv.ParseUint(n, 10, 64)
	if !ok || err != nil || strconv.FormatUint(size, 10) != n {
		return 0, nil, nil, errors.New("the first line is not \"old <size>\"")
	}
	if len(lines)-1 > 63 {
		return 0, nil, nil, errors.New("more than 63 proof lines")
	}
	var proof tlog.Proof
	for _, l := range lines[1:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			return 0, nil, nil, errors.New("a proof line is not a base64 hash")
		}
		proof = append(proof, tlog.Hash(h))
	}
	return size, proof, signed, nil
}

// Client submits a log's checkpoints to one witness.
type Client struct {
	URL         string // the witness's submission prefix
	VerifierKey string // the witness's cosignature/v1 verifier key
	HTTP        *http.Client
}

// ProofFunc returns the consistency proof from the tree of size old to
// the checkpoint's.
type ProofFunc func(old uint64) (tlog.Proof, error)

// Cosign submits the signed checkpoint with a consistency proof from the
// size the witness last cosigned (asking it first with old size 0 when
// that is unknown: the 409 answer says it), and returns the witness's
// cosignature line, checked with VerifierKey. last is the size the
// client believes the witness holds; it returns the one it holds now.
func (c *Client) Cosign(ctx context.Context, signed []byte, last uint64, proof ProofFunc) (line []byte, size uint64, err error) {
	v, err := fnote.NewVerifierForCosignatureV1(c.VerifierKey)
	if err != nil {
		return nil, last, fmt.Errorf("witness: %s: %w", c.URL, err)
	}
	text, _ := tlog.SplitNote(signed)
	cp, err := tlog.ParseBody(text)
	if err != nil {
		return nil, last, err
	}
	for attempt := 0; attempt < 2; attempt++ {
		var p tlog.Proof
		if last > 0 && last < cp.Size {
			if p, err = proof(last); err != nil {
				return nil, last, err
			}
		}
		status, body, err := c.post(ctx, requestBody(last, p, signed))
		if err != nil {
			return nil, last, err
		}
		switch status {
		case http.StatusOK:
			line, err := cosignature(text, body, v)
			if err != nil {
				return nil, last, fmt.Errorf("%w: %s: %w", ErrRefused, c.URL, err)
			}
			return line, cp.Size, nil
		case http.StatusConflict:
			held, err := strconv.ParseUint(strings.TrimSpace(string(body)), 10, 64)
			if err != nil {
				return nil, last, fmt.Errorf("%w: %s: 409 without a size", ErrRefused, c.URL)
			}
			if held > cp.Size {
				return nil, held, fmt.Errorf("%w: %s holds size %d, above this checkpoint's %d", ErrConflict, c.URL, held, cp.Size)
			}
			last = held
		default:
			return nil, last, fmt.Errorf("%w: %s: HTTP %d: %s", ErrRefused, c.URL, status, strings.TrimSpace(string(body)))
		}
	}
	return nil, last, fmt.Errorf("%w: %s: the size it holds keeps changing", ErrConflict, c.URL)
}

func requestBody(old uint64, p tlog.Proof, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range p {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

func (c *Client) post(ctx context.Context, body []byte) (int, []byte, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	url := strings.TrimSuffix(c.URL, "/") + "/" + AddCheckpointPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("witness: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("witness: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRequest))
	if err != nil {
		return 0, nil, fmt.Errorf("witness: %s: %w", url, err)
	}
	return resp.StatusCode, data, nil
}

// cosignature returns the line of body that is v's valid signature on
// the checkpoint text.
func cosignature(text, body []byte, v note.Verifier) ([]byte, error) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		n, err := note.Open(append(append(bytes.Clone(text), '\n'), line+"\n"...), note.VerifierList(v))
		if err == nil && len(n.Sigs) == 1 {
			return []byte(line + "\n"), nil
		}
	}
	return nil, errors.New("no valid cosignature by the pinned witness key in the answer")
}
