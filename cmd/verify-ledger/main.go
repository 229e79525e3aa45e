// Command verify-ledger checks a proofsite ledger export on your own machine,
// with nothing but the Go standard library. It is one file so that you can
// read all of it before you run it:
//
//	go run verify-ledger.go [flags] EXPORT.jsonl      (- reads standard input; Go 1.25 or later)
//	go run verify-ledger.go [flags] https://HOST      (URL mode: the host's public endpoints)
//
// Flags:
//
//	--genesis HASH         the genesis hash you trust (default: the export header's, or the host's)
//	--keys FILE            the published keys you trust, {"keys":[…]} (default: the export header's, or the host's)
//	--checkpoint SIZE:HASH a checkpoint you kept from an earlier run; the chain must extend it
//	--state FILE           remember checkpoints in FILE: require the one saved there (if any)
//	                       and, after a pass, save the new one
//	--max-age DURATION     URL mode: the oldest generated_at accepted as fresh (default 2m)
//	--json                 print the verdict as JSON
//
// In URL mode it reads three public endpoints of the host: /api/chain/status
// (keys and genesis), /api/ledger/strict-table (every row's public metadata,
// in the export's block format) and /api/ledger/verify (the verdict the host
// reports). It recomputes the verdict itself from the rows, then fails if the
// host's own verdict disagrees, or if any response's generated_at is missing
// or further than --max-age from this machine's clock: a live endpoint that
// repeats an old timestamp is drift, not proof. Keys and genesis fetched from
// the same host only prove the host agrees with itself; pin them with --keys
// and --genesis from a source you trust.
//
// An export is JSONL. The first line is a header:
//
//	{"format":"proofsite-ledger-export/1","genesis_hash":"…","keys":[{"key_id":"…","public_key":"…","role":"writer"}],"documented_seams":[{"block":153,"reason":"…"}],"private":false}
//
// and every other line is one block:
//
//	{"index":N,"timestamp":"…","kind":"…","payload_hash":"…","prev_hash":"…","writer":"…","hash":"…","signature":"…","witnesses":[{"key_id":"…","signature":"…"}]}
//
// For every block it recomputes hash = SHA-256 of the RFC 8785 canonical
// JSON of {index, kind, payload_hash, prev_hash, timestamp, writer} and
// verifies the ed25519 signatures of the writer and of each witness over that
// hash. Then it checks two views of the rows:
//
//   - the canonical spine: from the head (highest index) follow prev_hash to
//     the block with that hash, down to a genesis block (index 0, prev_hash of
//     zeros) with the pinned genesis hash; every block on the way must be
//     valid. This is the integrity verdict (canonical_spine_valid).
//   - the strict table: the rows in file order, each with index one more than
//     the row before and prev_hash equal to its hash. A break passes only if
//     it is a prev_hash mismatch at a block the header lists as a documented
//     seam, and only while the spine is valid.
//
// What it cannot see: an export that is consistent with itself but was
// rewritten, truncated or forged with stolen keys. Pin the genesis hash and
// the keys from a source you trust, keep the checkpoint it prints, and pass
// it with --checkpoint next time (or let --state keep it for you): a chain
// that does not extend it fails.
//
// Exit status: 0 pass (PASS or PASS_WITH_DOCUMENTED_STRICT_SEAM), 1 fail
// (any other verdict, or an export that cannot be read), 64 usage error.
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

type header struct {
	Format          string `json:"format"`
	GenesisHash     string `json:"genesis_hash"`
	Keys            []key  `json:"keys"`
	DocumentedSeams []seam `json:"documented_seams"`
	Private         bool   `json:"private"`
}

type key struct {
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	Role      string `json:"role"`
}

type seam struct {
	Block  int64  `json:"block"`
	Reason string `json:"reason"`
}

type block struct {
	Index       int64             `json:"index"`
	Timestamp   string            `json:"timestamp"`
	Kind        string            `json:"kind"`
	PayloadHash string            `json:"payload_hash"`
	PrevHash    string            `json:"prev_hash"`
	Writer      string            `json:"writer"`
	Hash        string            `json:"hash"`
	Signature   string            `json:"signature"`
	Witnesses   []json.RawMessage `json:"witnesses"`
	Description json.RawMessage   `json:"description"` // private exports only; not checked here
	Payload     json.RawMessage   `json:"payload"`     // private exports only; not checked here
	OnSpine     json.RawMessage   `json:"on_spine"`    // URL mode: the host's annotation; recomputed, not trusted
	Break       json.RawMessage   `json:"break"`       // URL mode: the host's annotation; recomputed, not trusted
}

type witness struct {
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"`
}

type pinnedKey struct {
	pub  ed25519.PublicKey
	role string
}

// run is the whole program; main only exits with its result.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-ledger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	genesis := fs.String("genesis", "", "trusted genesis hash (default: the export header's)")
	keysFile := fs.String("keys", "", "trusted keys file, {\"keys\":[...]} (default: the export header's)")
	checkpoint := fs.String("checkpoint", "", "checkpoint SIZE:HASH from an earlier run that the chain must extend")
	state := fs.String("state", "", "file that remembers the last checkpoint: required if present, updated after a pass")
	maxAge := fs.Duration("max-age", 2*time.Minute, "URL mode: the oldest generated_at accepted as fresh")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 || *maxAge <= 0 {
		fmt.Fprintln(stderr, "usage: verify-ledger [--genesis HASH] [--keys FILE] [--checkpoint SIZE:HASH] [--state FILE] [--max-age DURATION] [--json] EXPORT.jsonl|https://HOST")
		return 64
	}
	if *state != "" && *checkpoint == "" {
		if saved, err := os.ReadFile(*state); err == nil { // no file yet: nothing to require
			*checkpoint = strings.TrimSpace(string(saved))
		}
	}
	cpSize, cpHash, err := parseCheckpoint(*checkpoint)
	if err != nil || (*genesis != "" && !isHex(*genesis, 32)) {
		fmt.Fprintln(stderr, "verify-ledger: --genesis must be 64 lowercase hex digits and a checkpoint SIZE:HASH")
		return 64
	}
	var hdr header
	var rows []block
	var srv *served
	if isURL(fs.Arg(0)) {
		hdr, rows, srv, err = fetchHost(fs.Arg(0))
	} else {
		hdr, rows, err = readExport(fs.Arg(0), stdin)
	}
	if err == nil && *keysFile != "" {
		hdr.Keys, err = readKeys(*keysFile)
	}
	var keys map[string]pinnedKey
	if err == nil {
		keys, err = pinKeys(hdr.Keys)
	}
	if err != nil {
		fmt.Fprintf(stdout, "VERDICT FAIL_UNREADABLE_EXPORT\n  %v\n", err)
		return 1
	}
	if *genesis == "" {
		*genesis = hdr.GenesisHash
	}
	v := verify(rows, keys, *genesis, hdr.DocumentedSeams, cpSize, cpHash)
	if srv != nil {
		v = compareWithHost(v, srv, time.Now(), *maxAge)
	}
	printVerdict(stdout, v, *asJSON)
	if !v.pass() {
		return 1
	}
	if *state != "" { // remember this checkpoint: write a temporary file, then rename it
		err := os.WriteFile(*state+".tmp", []byte(v.Checkpoint+"\n"), 0o644)
		if err == nil {
			err = os.Rename(*state+".tmp", *state)
		}
		if err != nil {
			fmt.Fprintf(stderr, "verify-ledger: saving the checkpoint: %v\n", err)
			return 1
		}
	}
	return 0
}

// openSource opens the export.
func openSource(arg string, stdin io.Reader) (io.ReadCloser, error) {
	if arg == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(arg)
}

// readExport reads the header line and the blocks, strictly: exact member
// names, no duplicates, no unknown members, valid UTF-8.
func readExport(arg string, stdin io.Reader) (header, []block, error) {
	var hdr header
	src, err := openSource(arg, stdin)
	if err != nil {
		return hdr, nil, err
	}
	defer src.Close()
	sc := bufio.NewScanner(src)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		return hdr, nil, fmt.Errorf("line 1: missing header (%v)", sc.Err())
	}
	if err := decodeStrict(sc.Bytes(), &hdr, "format", "genesis_hash", "keys", "documented_seams", "?private"); err != nil {
		return hdr, nil, fmt.Errorf("line 1: %w", err)
	}
	if hdr.Format != "proofsite-ledger-export/1" {
		return hdr, nil, fmt.Errorf("line 1: unknown format %q", hdr.Format)
	}
	members := []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses"}
	if hdr.Private {
		members = append(members, "?description", "?payload")
	}
	var rows []block
	for line := 2; sc.Scan(); line++ {
		var b block
		if err := decodeStrict(sc.Bytes(), &b, members...); err != nil {
			return hdr, nil, fmt.Errorf("line %d: %w", line, err)
		}
		rows = append(rows, b)
	}
	return hdr, rows, sc.Err()
}

// decodeStrict decodes one JSON object into v after checking that its
// top-level member names are exactly the given ones (a "?" prefix marks an
// optional member), each at most once. encoding/json alone would let the
// last duplicate win and match names case-insensitively.
func decodeStrict(data []byte, v any, names ...string) error {
	if !utf8.Valid(data) {
		return errors.New("invalid UTF-8")
	}
	allowed := map[string]bool{} // name -> required
	for _, n := range names {
		allowed[strings.TrimPrefix(n, "?")] = !strings.HasPrefix(n, "?")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		if _, ok := allowed[name]; !ok || seen[name] {
			return fmt.Errorf("unexpected or repeated member %q", name)
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	for n, required := range allowed {
		if required && !seen[n] {
			return fmt.Errorf("missing member %q", n)
		}
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func readKeys(path string) ([]key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Keys []key `json:"keys"`
	}
	if err := decodeStrict(data, &doc, "keys"); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Keys, nil
}

// smallOrder lists the encodings of the ed25519 points of small order (with
// the sign bit cleared): signatures under such keys can be forged.
var smallOrder = []string{
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"0100000000000000000000000000000000000000000000000000000000000000", // order 1 (identity)
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p, non-canonical 0
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p+1, non-canonical 1
}

// pinKeys checks each published key: 32 bytes of hex, not of small order,
// a known role, and a key id derived from the key itself.
func pinKeys(published []key) (map[string]pinnedKey, error) {
	keys := map[string]pinnedKey{}
	for _, k := range published {
		if !isHex(k.PublicKey, 32) {
			return nil, fmt.Errorf("key %s: public key is not 32 bytes of lowercase hex", k.KeyID)
		}
		pub, _ := hex.DecodeString(k.PublicKey)
		masked := append([]byte(nil), pub...)
		masked[31] &= 0x7f
		for _, s := range smallOrder {
			if hex.EncodeToString(masked) == s {
				return nil, fmt.Errorf("key %s: small-order public key", k.KeyID)
			}
		}
		sum := sha256.Sum256(pub)
		if id := "ed25519:" + hex.EncodeToString(sum[:16]); id != k.KeyID {
			return nil, fmt.Errorf("key %s: id should be %s", k.KeyID, id)
		}
		if k.Role != "writer" && k.Role != "witness" {
			return nil, fmt.Errorf("key %s: unknown role %q", k.KeyID, k.Role)
		}
		if _, dup := keys[k.KeyID]; dup {
			return nil, fmt.Errorf("key %s listed twice", k.KeyID)
		}
		keys[k.KeyID] = pinnedKey{pub: pub, role: k.Role}
	}
	return keys, nil
}

// canonicalHeader returns the RFC 8785 canonical JSON of the hashed fields.
// The member names are ASCII, so sorting them by UTF-16 code units is plain
// alphabetical order; index is an integer in [0, 2^53) and prints as plain
// decimal; the rest are strings.
func canonicalHeader(b block) []byte {
	out := []byte(`{"index":` + strconv.FormatInt(b.Index, 10))
	for _, m := range [][2]string{{"kind", b.Kind}, {"payload_hash", b.PayloadHash}, {"prev_hash", b.PrevHash}, {"timestamp", b.Timestamp}, {"writer", b.Writer}} {
		out = append(out, `,"`+m[0]+`":`...)
		out = appendString(out, m[1])
	}
	return append(out, '}')
}

// appendString writes s as an RFC 8785 string: escape '"' and '\', write
// control characters as \b \t \n \f \r or \u00xx, copy everything else.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\b':
			out = append(out, `\b`...)
		case c == '\t':
			out = append(out, `\t`...)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '\f':
			out = append(out, `\f`...)
		case c == '\r':
			out = append(out, `\r`...)
		case c < 0x20:
			out = append(out, fmt.Sprintf(`\u%04x`, c)...)
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// checkRow verifies one block on its own and returns "" or what is wrong.
func checkRow(b block, keys map[string]pinnedKey) string {
	if b.Index < 0 || b.Index >= 1<<53 || !isHex(b.Hash, 32) || !isHex(b.PrevHash, 32) || !isHex(b.PayloadHash, 32) {
		return "malformed index or hash"
	}
	sum := sha256.Sum256(canonicalHeader(b))
	if hex.EncodeToString(sum[:]) != b.Hash {
		return "hash does not recompute: SHA-256 of the header is " + hex.EncodeToString(sum[:])
	}
	if !verifySig(keys, b.Writer, "writer", sum[:], b.Signature) {
		return "writer signature by " + b.Writer + " does not verify with a pinned writer key"
	}
	seen := map[string]bool{}
	for _, raw := range b.Witnesses {
		var w witness
		if err := decodeStrict(raw, &w, "key_id", "signature"); err != nil {
			return "malformed witness: " + err.Error()
		}
		if seen[w.KeyID] || !verifySig(keys, w.KeyID, "witness", sum[:], w.Signature) {
			return "witness signature by " + w.KeyID + " does not verify with a pinned witness key"
		}
		seen[w.KeyID] = true
	}
	return ""
}

func verifySig(keys map[string]pinnedKey, id, role string, msg []byte, sigHex string) bool {
	k, ok := keys[id]
	sig, err := hex.DecodeString(sigHex)
	return ok && k.role == role && err == nil && len(sig) == ed25519.SignatureSize && ed25519.Verify(k.pub, msg, sig)
}

type verdict struct {
	Status                  string   `json:"status"`
	Verdict                 string   `json:"verdict"`
	CanonicalSpineValid     bool     `json:"canonical_spine_valid"`
	StrictTableValid        bool     `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64   `json:"strict_table_break_at_block"`
	Failures                []string `json:"failures"`
	Notes                   []string `json:"notes"`
	Head                    string   `json:"head"`
	Checkpoint              string   `json:"checkpoint"` // keep it for --checkpoint next time
	Rows                    int      `json:"rows_checked"`
	Server                  *served  `json:"server,omitempty"` // URL mode: what the host reported
	verdicts                []string
}

func (v *verdict) pass() bool { return len(v.verdicts) == 0 }

func (v *verdict) fail(name, msg string) {
	v.verdicts = append(v.verdicts, name)
	v.Failures = append(v.Failures, msg)
}

// verify checks every row (on all cores), then the spine, the checkpoint
// and the strict table, and names the most serious failure.
func verify(rows []block, keys map[string]pinnedKey, genesis string, seams []seam, cpSize int64, cpHash string) *verdict {
	v := &verdict{Rows: len(rows), Failures: []string{}, Notes: []string{}}
	problems := make([]string, len(rows))
	var wg sync.WaitGroup
	for w := range runtime.NumCPU() {
		wg.Go(func() {
			for i := w; i < len(rows); i += runtime.NumCPU() {
				problems[i] = checkRow(rows[i], keys)
			}
		})
	}
	wg.Wait()
	if len(rows) == 0 {
		v.fail("FAIL_EMPTY_CHAIN", "the export has no blocks")
		return v.finish()
	}

	// The canonical spine.
	byHash, head := map[string]int{}, 0
	for i, b := range rows {
		if _, dup := byHash[b.Hash]; !dup {
			byHash[b.Hash] = i
		}
		if b.Index > rows[head].Index {
			head = i
		}
	}
	v.Head = fmt.Sprintf("%d %s", rows[head].Index, rows[head].Hash)
	v.Checkpoint = fmt.Sprintf("%d:%s", rows[head].Index+1, rows[head].Hash)
	onSpine := map[int64]string{} // index -> hash of the spine block
	zero := strings.Repeat("0", 64)
	for i := head; ; {
		b := rows[i]
		onSpine[b.Index] = b.Hash
		if problems[i] != "" {
			v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: %s", b.Index, problems[i]))
			break
		}
		if b.Index == 0 || b.PrevHash == zero {
			if b.Index != 0 || b.PrevHash != zero {
				v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: only block 0 may have a zero prev_hash", b.Index))
			} else if b.Hash != genesis {
				v.fail("FAIL_GENESIS_MISMATCH", fmt.Sprintf("the spine reaches genesis %s, not the pinned %s", b.Hash, genesis))
			}
			break
		}
		prev, ok := byHash[b.PrevHash]
		if !ok || rows[prev].Index >= b.Index {
			v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: prev_hash %s names no earlier block", b.Index, b.PrevHash))
			break
		}
		i = prev
	}
	v.CanonicalSpineValid = len(v.verdicts) == 0

	// The checkpoint an earlier run printed.
	if cpSize > 0 {
		if got := onSpine[cpSize-1]; rows[head].Index < cpSize-1 {
			v.fail("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the chain has %d blocks, the checkpoint %d: truncated or rolled back", rows[head].Index+1, cpSize))
		} else if got != cpHash {
			v.fail("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the spine does not pass through checkpoint block %d %s: rewritten or forked", cpSize-1, cpHash))
		}
	}

	// The strict table, in file order.
	documented := map[int64]string{}
	for _, s := range seams {
		documented[s.Block] = s.Reason
	}
	for i, b := range rows {
		wantIndex, wantPrev, msg := int64(0), zero, ""
		if i > 0 {
			wantIndex, wantPrev = rows[i-1].Index+1, rows[i-1].Hash
		}
		switch {
		case problems[i] != "":
			v.fail("FAIL_STRICT_TABLE_INVALID_ROW", fmt.Sprintf("row %d is invalid: %s", b.Index, problems[i]))
		case b.Index != wantIndex:
			msg = fmt.Sprintf("row %d: index should be %d", b.Index, wantIndex)
		case b.PrevHash != wantPrev:
			if reason, ok := documented[b.Index]; ok {
				v.Notes = append(v.Notes, fmt.Sprintf("documented seam at block %d: %s", b.Index, reason))
			} else {
				msg = fmt.Sprintf("row %d: prev_hash is not the hash of row %d", b.Index, rows[i-1].Index)
			}
		default:
			continue
		}
		if msg != "" {
			v.fail("FAIL_UNDOCUMENTED_STRICT_BREAK", "undocumented strict-table break: "+msg)
		}
		if v.StrictTableBreakAtBlock == nil {
			at := b.Index
			v.StrictTableBreakAtBlock = &at
		}
	}
	v.StrictTableValid = v.StrictTableBreakAtBlock == nil
	return v.finish()
}

// finish names the verdict: the first failure found, most serious first
// (spine, checkpoint, invalid rows, undocumented breaks).
func (v *verdict) finish() *verdict {
	v.Status, v.Verdict = "ok", "PASS"
	for _, name := range []string{"FAIL_EMPTY_CHAIN", "FAIL_GENESIS_MISMATCH", "FAIL_CANONICAL_SPINE_BROKEN", "FAIL_CHECKPOINT_NOT_EXTENDED", "FAIL_STRICT_TABLE_INVALID_ROW", "FAIL_UNDOCUMENTED_STRICT_BREAK", "FAIL_HOST_DISAGREES", "FAIL_STALE_RESPONSE"} {
		for _, got := range v.verdicts {
			if got == name && v.Status == "ok" {
				v.Status, v.Verdict = "fail", name
			}
		}
	}
	if v.pass() && !v.StrictTableValid {
		v.Verdict = "PASS_WITH_DOCUMENTED_STRICT_SEAM"
	}
	return v
}

func printVerdict(w io.Writer, v *verdict, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		return
	}
	fmt.Fprintf(w, "VERDICT %s\n", v.Verdict)
	fmt.Fprintf(w, "  canonical_spine_valid        %v\n  strict_table_valid           %v\n", v.CanonicalSpineValid, v.StrictTableValid)
	if v.StrictTableBreakAtBlock != nil {
		fmt.Fprintf(w, "  strict_table_break_at_block  %d\n", *v.StrictTableBreakAtBlock)
	}
	fmt.Fprintf(w, "  rows checked                 %d\n  head                         %s\n", v.Rows, v.Head)
	fmt.Fprintf(w, "  checkpoint                   %s (keep it; pass --checkpoint next time)\n", v.Checkpoint)
	if v.Server != nil {
		fmt.Fprintf(w, "  host verdict                 %s (canonical_spine_valid %v)\n", v.Server.Verdict, v.Server.CanonicalSpineValid)
		fmt.Fprintf(w, "  host generated_at            %s\n", strings.Join(v.Server.GeneratedAt, ", "))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, f := range v.Failures {
		fmt.Fprintf(w, "  FAIL %s\n", f)
	}
}

// served is what the host says about itself in URL mode.
type served struct {
	Verdict                 string   `json:"verdict"`
	CanonicalSpineValid     bool     `json:"canonical_spine_valid"`
	StrictTableValid        bool     `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64   `json:"strict_table_break_at_block"`
	GeneratedAt             []string `json:"generated_at"` // of each response, in the order fetched
	generated               []time.Time
	endpoints               []string
}

func isURL(s string) bool { return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") }

// fetchHost reads the host's public endpoints. The rows are decoded as
// strictly as an export's lines.
func fetchHost(base string) (header, []block, *served, error) {
	base = strings.TrimSuffix(base, "/")
	var hdr header
	srv := &served{}
	var status struct {
		Keys    []key `json:"keys"`
		Genesis struct {
			Hash string `json:"hash"`
		} `json:"genesis"`
	}
	var table struct {
		Rows            []json.RawMessage `json:"rows"`
		DocumentedSeams []seam            `json:"documented_seams"`
	}
	var reported struct {
		Verdict                 string `json:"verdict"`
		CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
		StrictTableValid        bool   `json:"strict_table_valid"`
		StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
	}
	for _, get := range []struct {
		path string
		into any
	}{{"/api/chain/status", &status}, {"/api/ledger/strict-table", &table}, {"/api/ledger/verify", &reported}} {
		at, err := fetchJSON(base+get.path, get.into)
		if err != nil {
			return hdr, nil, nil, err
		}
		srv.endpoints = append(srv.endpoints, get.path)
		srv.generated = append(srv.generated, at)
	}
	srv.Verdict, srv.CanonicalSpineValid = reported.Verdict, reported.CanonicalSpineValid
	srv.StrictTableValid, srv.StrictTableBreakAtBlock = reported.StrictTableValid, reported.StrictTableBreakAtBlock
	hdr.Keys, hdr.GenesisHash, hdr.DocumentedSeams = status.Keys, status.Genesis.Hash, table.DocumentedSeams
	// The host annotates rows with on_spine and break; they are its claims,
	// so they are accepted and ignored: the verdict is recomputed below.
	members := []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses", "?on_spine", "?break"}
	rows := make([]block, len(table.Rows))
	for i, raw := range table.Rows {
		if err := decodeStrict(raw, &rows[i], members...); err != nil {
			return hdr, nil, nil, fmt.Errorf("%s: row %d: %w", base+"/api/ledger/strict-table", i, err)
		}
	}
	return hdr, rows, srv, nil
}

// fetchJSON GETs one endpoint into v and returns its generated_at (zero
// when absent).
func fetchJSON(url string, v any) (time.Time, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "verify-ledger")
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("%s: HTTP %d: %.200s", url, resp.StatusCode, body)
	}
	if !utf8.Valid(body) {
		return time.Time{}, fmt.Errorf("%s: invalid UTF-8", url)
	}
	var fresh struct {
		GeneratedAt time.Time `json:"generated_at"`
	}
	if err := json.Unmarshal(body, &fresh); err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", url, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", url, err)
	}
	return fresh.GeneratedAt, nil
}

// compareWithHost fails the verdict when the host reports another one, or
// when a response is not fresh.
func compareWithHost(v *verdict, srv *served, now time.Time, maxAge time.Duration) *verdict {
	v.Server = srv
	for i, at := range srv.generated {
		srv.GeneratedAt = append(srv.GeneratedAt, at.UTC().Format(time.RFC3339))
		switch {
		case at.IsZero():
			v.fail("FAIL_STALE_RESPONSE", srv.endpoints[i]+" carries no generated_at: drift")
		case now.Sub(at) > maxAge || at.Sub(now) > maxAge:
			v.fail("FAIL_STALE_RESPONSE", fmt.Sprintf("%s generated_at %s is %s from now: drift", srv.endpoints[i], at.UTC().Format(time.RFC3339), now.Sub(at).Round(time.Second)))
		}
	}
	same := srv.Verdict == v.Verdict && srv.CanonicalSpineValid == v.CanonicalSpineValid && srv.StrictTableValid == v.StrictTableValid &&
		(srv.StrictTableBreakAtBlock == nil) == (v.StrictTableBreakAtBlock == nil) &&
		(srv.StrictTableBreakAtBlock == nil || *srv.StrictTableBreakAtBlock == *v.StrictTableBreakAtBlock)
	if !same {
		v.fail("FAIL_HOST_DISAGREES", fmt.Sprintf("the host reports %s (canonical_spine_valid %v), the rows give %s (canonical_spine_valid %v)",
			srv.Verdict, srv.CanonicalSpineValid, v.Verdict, v.CanonicalSpineValid))
	}
	// Re-name the verdict: a failure found here may outrank a pass.
	return v.finish()
}

func parseCheckpoint(s string) (int64, string, error) {
	if s == "" {
		return 0, "", nil
	}
	size, hash, _ := strings.Cut(s, ":")
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 1 || !isHex(hash, 32) {
		return 0, "", errors.New("bad checkpoint")
	}
	return n, hash, nil
}

// isHex reports whether s is exactly n bytes in lowercase hex.
func isHex(s string, n int) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 2*n && s == strings.ToLower(s)
}
