// Command verify-ledger checks a proofsite ledger on your own machine, with
// nothing but the Go standard library. It is one file so that you can read
// all of it before you run it:
//
//	go run verify-ledger.go [flags] EXPORT.jsonl      (- reads standard input; Go 1.25 or later)
//	go run verify-ledger.go [flags] https://HOST      (URL mode: the host's public endpoints)
//	go run verify-ledger.go --tiles --keys keys.json [--state FILE] https://HOST/ledger/|FOLDER
//	                                                   (tiles mode: the log's static C2SP tiles)
//	go run verify-ledger.go receipt --keys FILE [--request FILE] [--response FILE] RECEIPT.json
//
// Flags:
//
//	--keys FILE             the trust document you pinned: the host's /keys.json as served
//	                        ({"format":"proofsite-trust/1","keys":[…],"genesis_hash":…,
//	                        "documented_seams":[…],"witness_quorum":N,"log":{…}}), or the
//	                        older {"keys":[…]} form (keys only). Without it the keys and the
//	                        genesis are the export's (or the host's), which proves only that
//	                        they agree with themselves, and no seam is documented.
//	--seam BLOCK:HASH:PREV  document one strict-table seam: the row with that index, hash and
//	                        prev_hash (repeatable; adds to the trust document's seams)
//	--quorum N              distinct pinned witness signatures every block needs
//	                        (default: the trust document's witness_quorum, else 2)
//	--genesis HASH          the genesis hash you trust (default: the trust document's, else
//	                        the export's or the host's)
//	--checkpoint FILE|NOTE  a checkpoint you remembered from an earlier run: the rows must
//	                        still hash to its Merkle root
//	--state FILE            remember checkpoints in FILE: require the one saved there (if
//	                        any) and, after a pass, save the new one
//	--max-age DURATION      URL mode: the oldest generated_at accepted as fresh (default 2m)
//	--json                  print the verdict as JSON
//	--tiles                 the argument is the log's C2SP tlog-tiles prefix (see Tiles mode)
//	--cosigner KEY          tiles mode: pin a log witness's key, NAME+HASH+BASE64 (Ed25519
//	                        cosignature/v1, c2sp.org/tlog-cosignature); repeatable
//	--cosignatures K        tiles mode: valid cosignatures by pinned witnesses the checkpoint
//	                        needs (default: one from each --cosigner)
//
// Seams are taken only from --keys and --seam, never from the export or the
// host: their seam lists are information. When they list a seam you did not
// pin, the output says so and prints the --seam flag that would pin it.
//
// An export is JSONL. The first line is a header (information, not
// authority), the other lines are blocks:
//
//	{"format":"proofsite-ledger-export/1","genesis_hash":"…","keys":[{"key_id":"…","public_key":"…","role":"writer"}],"documented_seams":[{"block":153,"hash":"…","prev_hash":"…","reason":"…"}],"private":false,"checkpoint":"<signed note>"}
//	{"index":N,"timestamp":"…","kind":"…","payload_hash":"…","prev_hash":"…","writer":"…","hash":"…","signature":"…","witnesses":[{"key_id":"…","signature":"…"}]}
//
// A --private export's rows also carry "description" and "payload".
//
// For every row it recomputes hash = SHA-256 of the RFC 8785 canonical JSON
// of {index, kind, payload_hash, prev_hash, timestamp, writer}; verifies the
// ed25519 signatures of the writer and of each witness over that hash with
// the pinned keys (a witness listed twice, or a key pinned in another role,
// fails); requires the witness quorum of distinct valid witnesses; and, when
// the row carries its payload, requires SHA-256 of the payload's RFC 8785
// form to be payload_hash. Then it checks:
//
//   - the canonical spine: from the head (highest index) follow prev_hash to
//     the block with that hash, down to a genesis block (index 0, prev_hash of
//     zeros) with the pinned genesis hash; every block on the way must be
//     valid. This is the integrity verdict (canonical_spine_valid). A
//     timestamp earlier than the one of the block it links to is a warning.
//   - the strict table: the rows in file order, each with index one more than
//     the row before and prev_hash equal to its hash. A break passes only if
//     it is a prev_hash mismatch at a row whose index, hash and prev_hash a
//     pinned seam names, and only while the spine is valid.
//   - the checkpoints: the RFC 6962 Merkle root over every row (leaf = the
//     RFC 8785 canonical JSON of the row's public members, as in the export
//     line) in file order. A checkpoint you remembered must be the root of
//     the first SIZE rows (this catches a replaced row anywhere, a truncation
//     and a rewrite with stolen keys); the checkpoint the export or the host
//     presents must carry a valid signature by the pinned checkpoint key
//     (log.checkpoint_key, a C2SP signed note) and match the rows.
//
// In URL mode it reads /api/chain/status (keys, genesis, and the signed
// checkpoint in "signed_checkpoint" when the host publishes it; keys from
// /keys.json when the status has none), /api/ledger/strict-table (every
// row's public metadata, in the export's block format) and
// /api/ledger/verify (the verdict the host reports). It recomputes the
// verdict itself from the rows, then fails if the host's own verdict
// disagrees, or if any response's generated_at is missing or further than
// --max-age from this machine's clock: a live endpoint that repeats an old
// timestamp is drift, not proof.
//
// In tiles mode it reads the log's static files (a CDN or a folder copy
// serves them as well as the host): PREFIX/checkpoint must carry a valid
// signature by the pinned checkpoint key, for the pinned origin. The first
// time, it reads every entry bundle; the rows must hash to the signed root
// (and the hash tiles too), then they are verified as an export's rows.
// With --state it remembers the checkpoint and the verdict; the next run
// requires the tiles to hash to the remembered root at the remembered size
// (O(log n) tiles: the log was extended, not rewritten), reads only the
// bundles of the new rows, requires them, appended to the remembered tree,
// to hash to the new signed root, and checks each new row and its link to
// the remembered head. A new row that does not simply extend the spine
// (a break, a seam, a timestamp going back), or pins that changed since,
// make it verify every row again. Tiles mode needs --keys. With --cosigner,
// the checkpoint must also carry --cosignatures valid cosignatures by those
// witnesses (c2sp.org/tlog-witness): independent parties that vouch the log
// showed them no other history, else FAIL_CHECKPOINT_INVALID.
//
// What it cannot see without a remembered checkpoint: a chain consistent
// with itself that was truncated, or rewritten and re-signed with stolen
// keys (an off-spine row replaced that way too). Keep the checkpoint it
// prints (or let --state keep it) and pass it next time.
//
// Verdicts: PASS and PASS_WITH_DOCUMENTED_STRICT_SEAM pass. The failures,
// most serious first: FAIL_UNREADABLE_EXPORT (the file cannot be read or
// parsed), FAIL_UNREACHABLE_HOST (no HTTP answer), FAIL_UNREADABLE_HOST_RESPONSE
// (an answer that is not HTTP 200 with the expected JSON), FAIL_EMPTY_CHAIN,
// FAIL_GENESIS_MISMATCH, FAIL_CANONICAL_SPINE_BROKEN,
// FAIL_CHECKPOINT_NOT_EXTENDED, FAIL_CHECKPOINT_INVALID,
// FAIL_STRICT_TABLE_INVALID_ROW, FAIL_UNDOCUMENTED_STRICT_BREAK,
// FAIL_HOST_DISAGREES, FAIL_STALE_RESPONSE.
//
// Receipt mode checks a receipt an AI node of the host signed, offline.
// RECEIPT.json is the receipt object, or a whole answer that carries one in
// its "receipt" member (the answer is then the response it must cover).
// --keys (required) is the trust document: the receipt's key_id must be a
// pinned key of role node, pinned for the node the receipt names. The
// signature must verify over the RFC 8785 canonical JSON of the receipt's
// members other than key_id and signature; with --request (the JSON body
// sent) and --response (the JSON answer), request_sha256 and
// response_sha256 must be SHA-256 of their canonical forms, the response's
// top-level "receipt" member left out. It prints "RECEIPT VERIFIED" and
// exits 0, or "RECEIPT NOT VERIFIED" with the member that failed and exits
// 1; a file it cannot read is a usage error (64).
//
// Exit status: 0 on a pass; 1 on any FAIL verdict (printed first, as
// "VERDICT <name>", or in the JSON) and when --state cannot be saved after a
// pass; 64 on a usage error: unknown or malformed flags, not exactly one
// argument, or a --keys, --checkpoint or --state file that cannot be read
// or parsed (nothing is verified then).
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const exportFormat, trustFormat = "proofsite-ledger-export/1", "proofsite-trust/1"

type header struct {
	Format          string `json:"format"`
	GenesisHash     string `json:"genesis_hash"`
	Keys            []key  `json:"keys"`
	DocumentedSeams []seam `json:"documented_seams"`
	Private         bool   `json:"private"`
	Checkpoint      string `json:"checkpoint"`
}

type key struct {
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	Role      string `json:"role"`
	Node      string `json:"node"` // role node only: the AI node whose receipts it signs
}

type seam struct {
	Block    int64  `json:"block"`
	Hash     string `json:"hash"`
	PrevHash string `json:"prev_hash"`
	Reason   string `json:"reason"`
}

// trust is the trust document (or, with Format empty, the older keys file).
type trust struct {
	Format          string `json:"format"`
	Keys            []key  `json:"keys"`
	GenesisHash     string `json:"genesis_hash"`
	DocumentedSeams []seam `json:"documented_seams"`
	WitnessQuorum   int    `json:"witness_quorum"`
	Log             struct {
		Origin        string `json:"origin"`
		CheckpointKey string `json:"checkpoint_key"`
	} `json:"log"`
}

type block struct {
	Index       int64           `json:"index"`
	Timestamp   string          `json:"timestamp"`
	Kind        string          `json:"kind"`
	PayloadHash string          `json:"payload_hash"`
	PrevHash    string          `json:"prev_hash"`
	Writer      string          `json:"writer"`
	Hash        string          `json:"hash"`
	Signature   string          `json:"signature"`
	Witnesses   []witness       `json:"witnesses"`
	Description json.RawMessage `json:"description"` // private exports only
	Payload     json.RawMessage `json:"payload"`     // private exports only; checked against payload_hash
	OnSpine     json.RawMessage `json:"on_spine"`    // URL mode: the host's annotation; recomputed, not trusted
	Break       json.RawMessage `json:"break"`       // URL mode: the host's annotation; recomputed, not trusted
}

type witness struct {
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"`
}

type pinnedKey struct {
	pub  ed25519.PublicKey
	role string
	node string // role node: the AI node whose receipts it signs
}

// pins are everything the verdict depends on besides the rows.
type pins struct {
	keys       map[string]pinnedKey
	genesis    string
	seams      []seam
	quorum     int
	origin     string      // the log's origin, when pinned
	cpKey      *noteKey    // the checkpoint key, when pinned
	remembered *checkpoint // --checkpoint / --state
	state      *tileState  // --state, as tiles mode writes it
	cosigners  []*noteKey  // --cosigner: log witnesses' cosignature keys
	needCosigs int         // --cosignatures
	presented  string      // the signed checkpoint the export or host presents
	infoSeams  []seam      // seams the export or host lists (information)
	source     string      // "the export header" or "the host"
	keysFrom   string      // where the keys came from, for the notes
}

// run is the whole program; main only exits with its result.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "receipt" {
		return runReceipt(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("verify-ledger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keysFile := fs.String("keys", "", "trust document (the host's /keys.json) or {\"keys\":[...]} file")
	var seamFlags []string
	fs.Func("seam", "document a seam `BLOCK:HASH:PREVHASH` (repeatable)", func(s string) error { seamFlags = append(seamFlags, s); return nil })
	quorum := fs.Int("quorum", 0, "distinct pinned witness signatures every block needs (default: the trust document's, else 2)")
	genesis := fs.String("genesis", "", "trusted genesis hash (default: the trust document's, else the export's)")
	checkpointArg := fs.String("checkpoint", "", "a remembered checkpoint: a file, or the note text itself")
	state := fs.String("state", "", "file that remembers the last checkpoint: required if present, updated after a pass")
	maxAge := fs.Duration("max-age", 2*time.Minute, "URL mode: the oldest generated_at accepted as fresh")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	var cosigners []string
	fs.Func("cosigner", "tiles mode: pin a log witness's cosignature key `NAME+HASH+KEY` (repeatable)", func(s string) error { cosigners = append(cosigners, s); return nil })
	cosignatures := fs.Int("cosignatures", -1, "tiles mode: valid cosignatures the checkpoint needs from the pinned --cosigner keys (default: all of them)")
	tiles := fs.Bool("tiles", false, "the argument is a C2SP tlog-tiles log: a URL prefix (https://HOST/ledger/) or a folder; needs --keys with the log's checkpoint key")
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintln(stderr, "verify-ledger: "+msg)
		}
		fmt.Fprintln(stderr, "usage: verify-ledger [--keys FILE] [--seam BLOCK:HASH:PREV]... [--quorum N] [--genesis HASH] [--checkpoint FILE|NOTE] [--state FILE] [--max-age DURATION] [--json] EXPORT.jsonl|-|https://HOST\n       verify-ledger --tiles --keys FILE [--state FILE] [...] https://HOST/ledger/|FOLDER")
		return 64
	}
	if err := fs.Parse(args); err != nil {
		return usage("")
	}
	if fs.NArg() != 1 || *maxAge <= 0 || *quorum < 0 {
		return usage("give exactly one export or URL, a positive --max-age and a --quorum of 0 or more")
	}
	p, err := readPins(*keysFile, seamFlags, *quorum, *genesis, *checkpointArg, *state)
	if err != nil {
		return usage(err.Error())
	}
	if (len(cosigners) > 0 || *cosignatures >= 0) && !*tiles {
		return usage("--cosigner and --cosignatures need --tiles: only the log's checkpoint carries cosignatures")
	}
	for _, c := range cosigners {
		k, err := parseCosignerKey(c)
		if err != nil {
			return usage(fmt.Sprintf("--cosigner %q: %v", c, err))
		}
		p.cosigners = append(p.cosigners, k)
	}
	if p.needCosigs = *cosignatures; p.needCosigs < 0 {
		p.needCosigs = len(p.cosigners)
	}
	if p.needCosigs > len(p.cosigners) {
		return usage(fmt.Sprintf("--cosignatures %d needs at least that many --cosigner keys", p.needCosigs))
	}
	if *tiles && (p.cpKey == nil || p.origin == "") {
		return usage("--tiles needs --keys with the log's origin and checkpoint key (log.checkpoint_key): a log's checkpoint is only as good as the key it is checked with")
	}

	var v *verdict
	if *tiles {
		v = verifyTiles(fs.Arg(0), p, p.state)
	} else if isURL(fs.Arg(0)) {
		v = verifyHost(fs.Arg(0), p, time.Now, *maxAge)
	} else {
		v = verifyExport(fs.Arg(0), stdin, p)
	}
	printVerdict(stdout, v, *asJSON)
	if !v.pass() {
		return 1
	}
	if *state != "" { // remember this checkpoint: write a temporary file, then rename it
		data := []byte(v.Checkpoint)
		if *tiles { // and, in tiles mode, what the next run builds on
			data, _ = json.MarshalIndent(tileState{Checkpoint: v.Checkpoint, Verdict: v.Verdict, StrictTableBreakAtBlock: v.StrictTableBreakAtBlock,
				HeadIndex: v.head.Index, HeadHash: v.head.Hash, HeadTime: v.head.Timestamp, Pins: p.fingerprint()}, "", "  ")
		}
		err := os.WriteFile(*state+".tmp", data, 0o644)
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

// readPins reads what the auditor pinned. Any problem is a usage error.
func readPins(keysFile string, seamFlags []string, quorum int, genesis, checkpointArg, state string) (*pins, error) {
	p := &pins{quorum: quorum, genesis: genesis}
	if genesis != "" && !isHex(genesis, 32) {
		return nil, errors.New("--genesis must be 64 lowercase hex digits")
	}
	if keysFile != "" {
		t, err := readTrust(keysFile)
		if err != nil {
			return nil, fmt.Errorf("--keys %s: %w", keysFile, err)
		}
		if p.keys, err = pinKeys(t.Keys); err != nil {
			return nil, fmt.Errorf("--keys %s: %w", keysFile, err)
		}
		p.keysFrom, p.seams, p.origin = "--keys "+keysFile, t.DocumentedSeams, t.Log.Origin
		if p.genesis == "" {
			p.genesis = t.GenesisHash
		}
		if p.quorum == 0 {
			p.quorum = t.WitnessQuorum
		}
		if t.Log.CheckpointKey != "" {
			if p.cpKey, err = parseNoteKey(t.Log.CheckpointKey); err != nil || p.cpKey.name != t.Log.Origin {
				return nil, fmt.Errorf("--keys %s: log.checkpoint_key is not a note verifier key named %q", keysFile, t.Log.Origin)
			}
		}
	}
	if p.quorum == 0 {
		p.quorum = 2
	}
	for _, s := range seamFlags {
		parts := strings.Split(s, ":")
		n, err := strconv.ParseInt(parts[0], 10, 64)
		if len(parts) != 3 || err != nil || n < 1 || !isHex(parts[1], 32) || !isHex(parts[2], 32) {
			return nil, fmt.Errorf("--seam %q: want BLOCK:HASH:PREVHASH (a seam without its row's hashes documents nothing)", s)
		}
		p.seams = append(p.seams, seam{Block: n, Hash: parts[1], PrevHash: parts[2], Reason: "pinned with --seam"})
	}
	text := checkpointArg
	if text != "" && !strings.Contains(text, "\n") && !strings.Contains(text, ":") {
		data, err := os.ReadFile(text)
		if err != nil {
			return nil, fmt.Errorf("--checkpoint: %w", err)
		}
		text = string(data)
	}
	if text == "" && state != "" {
		data, err := os.ReadFile(state)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // no file yet: nothing to require
			return nil, fmt.Errorf("--state: %w", err)
		}
		text = string(data)
		if strings.HasPrefix(text, "{") { // tiles mode's state: the checkpoint and the verdict it had
			p.state = &tileState{}
			if err := decodeStrict(data, p.state, "checkpoint", "verdict", "strict_table_break_at_block", "head_index", "head_hash", "head_timestamp", "pins"); err != nil {
				return nil, fmt.Errorf("--state %s: %w", state, err)
			}
			text = p.state.Checkpoint
		}
	}
	if text != "" {
		c, err := parseRemembered(text)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		p.remembered = &c
	}
	return p, nil
}

// readTrust reads a trust document strictly: exact member names, each
// once, no others, valid UTF-8. The older {"keys":[…]} form pins keys only.
func readTrust(path string) (trust, error) {
	var t trust
	data, err := os.ReadFile(path)
	if err != nil {
		return t, err
	}
	if err := decodeStrict(data, &t, "keys", "?format", "?genesis_hash", "?documented_seams", "?witness_quorum", "?log"); err != nil {
		return t, err
	}
	for _, raw := range jsonMembers(data, "keys") {
		var k key
		if err := decodeStrict(raw, &k, "key_id", "public_key", "role", "?node"); err != nil {
			return t, fmt.Errorf("keys: %w", err)
		}
		if (k.Role == "node") != (k.Node != "") {
			return t, fmt.Errorf("keys: key %s: a node key, and only a node key, names its node", k.KeyID)
		}
	}
	if t.Format == "" {
		if err := decodeStrict(data, &trust{}, "keys"); err != nil {
			return t, err
		}
		return t, nil
	}
	if err := decodeStrict(data, &trust{}, "format", "keys", "genesis_hash", "documented_seams", "witness_quorum", "log"); err != nil {
		return t, err
	}
	if t.Format != trustFormat || !isHex(t.GenesisHash, 32) || t.WitnessQuorum < 1 || t.Log.Origin == "" {
		return t, fmt.Errorf("not a %s document (format, genesis_hash, witness_quorum >= 1 and log.origin are required)", trustFormat)
	}
	for _, raw := range jsonMembers(data, "documented_seams") {
		if err := decodeStrict(raw, &seam{}, "block", "hash", "prev_hash", "reason"); err != nil {
			return t, fmt.Errorf("documented_seams: %w", err)
		}
	}
	for _, s := range t.DocumentedSeams {
		if !isHex(s.Hash, 32) || !isHex(s.PrevHash, 32) {
			return t, fmt.Errorf("the seam at block %d has no hash and prev_hash: it would document nothing", s.Block)
		}
	}
	return t, decodeStrict(jsonMembers(data, "log")[0], &t.Log, "origin", "checkpoint_key")
}

// jsonMembers returns the elements of the array member name of a JSON
// object (or the member itself when it is not an array).
func jsonMembers(data []byte, name string) []json.RawMessage {
	var obj map[string]json.RawMessage
	json.Unmarshal(data, &obj)
	var list []json.RawMessage
	if json.Unmarshal(obj[name], &list) != nil {
		return []json.RawMessage{obj[name]}
	}
	return list
}

// decodeStrict decodes one JSON object into v after checking that its
// top-level member names are exactly the given ones (a "?" prefix marks an
// optional member), each at most once, no required one null. encoding/json alone would
// let the last duplicate win and match names case-insensitively.
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
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		if string(value) == "null" && allowed[name] {
			return fmt.Errorf("member %q is null", name)
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
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
// a known role, and a key id derived from the key itself. Only writer and
// witness keys are ever accepted on blocks; bridge and node keys are
// published beside them.
func pinKeys(published []key) (map[string]pinnedKey, error) {
	keys := map[string]pinnedKey{}
	for _, k := range published {
		if !isHex(k.PublicKey, 32) {
			return nil, fmt.Errorf("key %s: public key is not 32 bytes of lowercase hex", k.KeyID)
		}
		pub, _ := hex.DecodeString(k.PublicKey)
		masked := append([]byte(nil), pub...)
		masked[31] &= 0x7f
		if slices.Contains(smallOrder, hex.EncodeToString(masked)) {
			return nil, fmt.Errorf("key %s: small-order public key", k.KeyID)
		}
		sum := sha256.Sum256(pub)
		if id := "ed25519:" + hex.EncodeToString(sum[:16]); id != k.KeyID {
			return nil, fmt.Errorf("key %s: id should be %s", k.KeyID, id)
		}
		if !slices.Contains([]string{"writer", "witness", "bridge", "node"}, k.Role) {
			return nil, fmt.Errorf("key %s: unknown role %q", k.KeyID, k.Role)
		}
		if _, dup := keys[k.KeyID]; dup {
			return nil, fmt.Errorf("key %s listed twice", k.KeyID)
		}
		keys[k.KeyID] = pinnedKey{pub: pub, role: k.Role, node: k.Node}
	}
	return keys, nil
}

// openSource opens the export.
func openSource(arg string, stdin io.Reader) (io.ReadCloser, error) {
	if arg == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(arg)
}

// verifyExport reads an export and verifies it against the pins.
func verifyExport(arg string, stdin io.Reader, p *pins) *verdict {
	hdr, rows, err := readExport(arg, stdin)
	if err != nil {
		return failed("FAIL_UNREADABLE_EXPORT", err.Error())
	}
	p.source = "the export header"
	if err := p.fromSource(hdr.Keys, hdr.GenesisHash); err != nil {
		return failed("FAIL_UNREADABLE_EXPORT", "line 1: "+err.Error())
	}
	p.presented, p.infoSeams = hdr.Checkpoint, hdr.DocumentedSeams
	return verify(rows, p)
}

// fromSource fills the keys and genesis the auditor did not pin from the
// source (the export header, the host).
func (p *pins) fromSource(keys []key, genesis string) error {
	if p.keys == nil {
		var err error
		if p.keys, err = pinKeys(keys); err != nil {
			return err
		}
		p.keysFrom = p.source
	}
	if p.genesis == "" {
		p.genesis = genesis
	}
	return nil
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
	if err := decodeStrict(sc.Bytes(), &hdr, "format", "genesis_hash", "keys", "documented_seams", "?private", "?checkpoint"); err != nil {
		return hdr, nil, fmt.Errorf("line 1: %w", err)
	}
	if hdr.Format != exportFormat {
		return hdr, nil, fmt.Errorf("line 1: unknown format %q", hdr.Format)
	}
	members := []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses"}
	if hdr.Private {
		members = append(members, "?description", "?payload")
	}
	var rows []block
	for line := 2; sc.Scan(); line++ {
		b, err := decodeBlock(sc.Bytes(), members)
		if err != nil {
			return hdr, nil, fmt.Errorf("line %d: %w", line, err)
		}
		rows = append(rows, b)
	}
	return hdr, rows, sc.Err()
}

// decodeBlock decodes one row strictly, its witness entries included.
func decodeBlock(data []byte, members []string) (block, error) {
	var b block
	if err := decodeStrict(data, &b, members...); err != nil {
		return b, err
	}
	for _, raw := range jsonMembers(data, "witnesses") {
		if err := decodeStrict(raw, &witness{}, "key_id", "signature"); err != nil {
			return b, fmt.Errorf("witness: %w", err)
		}
	}
	if b.Payload != nil {
		if _, err := canonicalJSON(b.Payload); err != nil && !errors.Is(err, errNotCanonicalizable) {
			return b, fmt.Errorf("payload: %w", err)
		}
	}
	return b, nil
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

// canonicalRow returns the row's Merkle leaf: the RFC 8785 canonical JSON
// of its public members (those of an export line), in code-point order.
func canonicalRow(b block) []byte {
	out := []byte(`{"hash":`)
	out = appendString(out, b.Hash)
	out = append(out, `,"index":`+strconv.FormatInt(b.Index, 10)...)
	for _, m := range [][2]string{{"kind", b.Kind}, {"payload_hash", b.PayloadHash}, {"prev_hash", b.PrevHash}, {"signature", b.Signature}, {"timestamp", b.Timestamp}} {
		out = append(out, `,"`+m[0]+`":`...)
		out = appendString(out, m[1])
	}
	out = append(out, `,"witnesses":[`...)
	for i, w := range b.Witnesses {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(append(out, `{"key_id":`...), w.KeyID)
		out = append(appendString(append(out, `,"signature":`...), w.Signature), '}')
	}
	out = appendString(append(out, `],"writer":`...), b.Writer)
	return append(out, '}')
}

// errNotCanonicalizable marks JSON that is well formed but outside what
// RFC 8785 can represent exactly (integers beyond ±(2^53−1), lone
// surrogates): a payload like that can never match its hash.
var errNotCanonicalizable = errors.New("not canonicalizable")

// canonicalJSON returns the RFC 8785 (JCS) form of one JSON value with the
// same input rules as the ledger: RFC 8259 grammar, valid UTF-8, no
// duplicate member names, no lone surrogates, numbers within ±(2^53−1),
// nesting at most 512 deep. Members are sorted by their UTF-16 code units;
// numbers are printed as ECMAScript does.
func canonicalJSON(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	p := &jsonParser{data: data}
	out, err := p.value(nil, 0)
	if err != nil {
		return nil, err
	}
	if p.space(); p.pos != len(data) {
		return nil, errors.New("trailing data")
	}
	return out, nil
}

type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) && strings.IndexByte(" \t\n\r", p.data[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *jsonParser) value(out []byte, depth int) ([]byte, error) {
	p.space()
	if depth > 512 || p.pos >= len(p.data) {
		return nil, errors.New("unexpected end or nesting too deep")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		p.pos++
		out = append(out, '[')
		for i := 0; ; i++ {
			if p.space(); i == 0 && p.pos < len(p.data) && p.data[p.pos] == ']' {
				p.pos++
				return append(out, ']'), nil
			}
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = p.value(out, depth+1); err != nil {
				return nil, err
			}
			if done, err := p.next(']'); err != nil || done {
				return append(out, ']'), err
			}
		}
	case c == '"':
		s, err := p.str()
		return appendString(out, s), err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
			p.pos += len(lit)
			return append(out, lit...), nil
		}
	}
	return nil, fmt.Errorf("unexpected character at offset %d", p.pos)
}

// next consumes ',' (false) or the closing byte (true).
func (p *jsonParser) next(closing byte) (bool, error) {
	p.space()
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == ',':
		p.pos++
		return false, nil
	case p.pos < len(p.data) && p.data[p.pos] == closing:
		p.pos++
		return true, nil
	}
	return false, fmt.Errorf("expected ',' or %q at offset %d", closing, p.pos)
}

func (p *jsonParser) object(out []byte, depth int) ([]byte, error) {
	p.pos++
	type member struct {
		name  string
		value []byte
	}
	var members []member
	for i := 0; ; i++ {
		if p.space(); i == 0 && p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			break
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, fmt.Errorf("expected a member name at offset %d", p.pos)
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(members, func(m member) bool { return m.name == name }) {
			return nil, fmt.Errorf("duplicate member %q", name)
		}
		if p.space(); p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, fmt.Errorf("expected ':' at offset %d", p.pos)
		}
		p.pos++
		value, err := p.value(nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{name, value})
		if done, err := p.next('}'); err != nil {
			return nil, err
		} else if done {
			break
		}
	}
	slices.SortFunc(members, func(a, b member) int {
		return slices.Compare(utf16.Encode([]rune(a.name)), utf16.Encode([]rune(b.name)))
	})
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(appendString(out, m.name), ':'), m.value...)
	}
	return append(out, '}'), nil
}

// str reads a string token and returns its value.
func (p *jsonParser) str() (string, error) {
	p.pos++
	var out []byte
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c < 0x20:
			return "", errors.New("control character in a string")
		case c != '\\':
			out = append(out, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		e := p.data[p.pos+1]
		p.pos += 2
		if i := strings.IndexByte(`"\/bfnrt`, e); i >= 0 {
			out = append(out, "\"\\/\b\f\n\r\t"[i])
			continue
		}
		if e != 'u' {
			return "", fmt.Errorf("invalid escape \\%c", e)
		}
		r, err := p.hex4()
		if err != nil {
			return "", err
		}
		if utf16.IsSurrogate(r) {
			lo := rune(-1)
			if r < 0xdc00 && strings.HasPrefix(string(p.data[p.pos:]), `\u`) {
				p.pos += 2
				if lo, err = p.hex4(); err != nil {
					return "", err
				}
			}
			if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
				return "", fmt.Errorf("%w: lone UTF-16 surrogate", errNotCanonicalizable)
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return "", errors.New("unterminated string")
}

func (p *jsonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, errors.New("short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, errors.New("bad \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}

// number reads an RFC 8259 number and prints it as ECMAScript's
// Number.prototype.toString does (RFC 8785 §3.2.2.3).
func (p *jsonParser) number(out []byte) ([]byte, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for ; p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9'; p.pos++ {
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 || (n > 1 && p.data[intStart] == '0') {
		return nil, fmt.Errorf("invalid number at offset %d", start)
	}
	integer := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if integer = false; digits() == 0 {
			return nil, fmt.Errorf("invalid number at offset %d", start)
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if integer = false; digits() == 0 {
			return nil, fmt.Errorf("invalid number at offset %d", start)
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	const maxSafe = 1<<53 - 1
	if integer && (p.pos-intStart > 16 || math.Abs(f) > maxSafe) || err != nil || math.Abs(f) > maxSafe {
		return nil, fmt.Errorf("%w: number %s beyond ±(2^53-1)", errNotCanonicalizable, p.data[start:p.pos])
	}
	return appendES(out, f), nil
}

// appendES prints f as ECMAScript does: the shortest digits that round-trip,
// as an integer or decimal between 1e-7 and 1e21, in exponent form outside.
func appendES(out []byte, f float64) []byte {
	if f == 0 {
		return append(out, '0') // also -0
	}
	if f < 0 {
		out, f = append(out, '-'), -f
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	k := len(digits)
	e, _ := strconv.Atoi(exp)
	n := e + 1 // the decimal point sits after n digits
	switch {
	case k <= n && n <= 21:
		return append(append(out, digits...), strings.Repeat("0", n-k)...)
	case 0 < n && n <= 21:
		return append(append(append(out, digits[:n]...), '.'), digits[n:]...)
	case -6 < n && n <= 0:
		return append(append(append(out, "0."...), strings.Repeat("0", -n)...), digits...)
	}
	out = append(out, digits[0])
	if k > 1 {
		out = append(append(out, '.'), digits[1:]...)
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	return strconv.AppendInt(append(append(out, 'e'), sign...), int64(abs(n-1)), 10)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// rowCheck is what can be said of one row on its own.
type rowCheck struct {
	problem string    // "" when the row is valid
	leaf    [32]byte  // the row's Merkle leaf hash
	time    time.Time // zero when malformed
}

// checkRow verifies one row on its own.
func checkRow(b block, keys map[string]pinnedKey, quorum int) rowCheck {
	c := rowCheck{leaf: leafHash(canonicalRow(b))}
	if b.Index < 0 || b.Index >= 1<<53 || !isHex(b.Hash, 32) || !isHex(b.PrevHash, 32) || !isHex(b.PayloadHash, 32) || !isHex(b.Signature, 64) {
		c.problem = "malformed index, hash or signature"
		return c
	}
	if t, err := time.Parse(time.RFC3339Nano, b.Timestamp); err == nil && t.UTC().Format(time.RFC3339Nano) == b.Timestamp {
		c.time = t
	}
	sum := sha256.Sum256(canonicalHeader(b))
	switch {
	case hex.EncodeToString(sum[:]) != b.Hash:
		c.problem = "hash does not recompute: SHA-256 of the header is " + hex.EncodeToString(sum[:])
		return c
	case !verifySig(keys, b.Writer, "writer", sum[:], b.Signature):
		c.problem = "writer signature by " + b.Writer + " does not verify with a pinned writer key"
		return c
	case c.time.IsZero() || (b.Index == 0) != (b.PrevHash == zeroHash):
		c.problem = "malformed timestamp or genesis link"
		return c
	}
	seen := map[string]bool{}
	for _, w := range b.Witnesses {
		if seen[w.KeyID] || !verifySig(keys, w.KeyID, "witness", sum[:], w.Signature) {
			c.problem = "witness signature by " + w.KeyID + " does not verify with a pinned witness key, or is listed twice"
			return c
		}
		seen[w.KeyID] = true
	}
	if len(seen) < quorum {
		c.problem = fmt.Sprintf("%d valid pinned witness signature(s), the quorum is %d", len(seen), quorum)
		return c
	}
	if b.Payload != nil {
		canon, err := canonicalJSON(b.Payload)
		if sum := sha256.Sum256(canon); err != nil || hex.EncodeToString(sum[:]) != b.PayloadHash {
			c.problem = "the payload's canonical SHA-256 is not payload_hash"
		}
	}
	return c
}

const zeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

func verifySig(keys map[string]pinnedKey, id, role string, msg []byte, sigHex string) bool {
	k, ok := keys[id]
	sig, err := hex.DecodeString(sigHex)
	return ok && k.role == role && err == nil && len(sig) == ed25519.SignatureSize && ed25519.Verify(k.pub, msg, sig)
}

// RFC 6962 Merkle tree hashing: leaves are SHA-256(0x00 || leaf), inner
// nodes SHA-256(0x01 || left || right).
func leafHash(leaf []byte) [32]byte { return sha256.Sum256(append([]byte{0}, leaf...)) }

func nodeHash(l, r [32]byte) [32]byte {
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// merkleRoot is RFC 6962's MTH over leaf hashes: the largest power of two
// below n leaves goes left, the rest right.
func merkleRoot(leaves [][32]byte) [32]byte {
	switch n := len(leaves); n {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return leaves[0]
	default:
		k := 1
		for k*2 < n {
			k *= 2
		}
		return nodeHash(merkleRoot(leaves[:k]), merkleRoot(leaves[k:]))
	}
}

// checkpoint is a C2SP tlog-checkpoint: origin, size and root.
type checkpoint struct {
	origin string
	size   int64
	root   [32]byte
}

// body returns the checkpoint text: "<origin>\n<size>\n<base64 root>\n".
func (c checkpoint) body() string {
	return c.origin + "\n" + strconv.FormatInt(c.size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.root[:]) + "\n"
}

// parseBody reads a checkpoint's three lines strictly (no extension lines).
func parseBody(text string) (checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" || lines[0] == "" {
		return checkpoint{}, errors.New("a checkpoint is three lines: origin, size, root")
	}
	c := checkpoint{origin: lines[0]}
	var err error
	if c.size, err = strconv.ParseInt(lines[1], 10, 64); err != nil || c.size < 0 || strconv.FormatInt(c.size, 10) != lines[1] {
		return checkpoint{}, errors.New("bad checkpoint size")
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return checkpoint{}, errors.New("bad checkpoint root")
	}
	copy(c.root[:], root)
	return c, nil
}

// parseRemembered reads a checkpoint the auditor kept (trusted as it
// stands): a checkpoint note, signed or not, or "SIZE:ROOT" in hex.
func parseRemembered(s string) (checkpoint, error) {
	if !strings.Contains(s, "\n") {
		size, root, _ := strings.Cut(strings.TrimSpace(s), ":")
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 0 || !isHex(root, 32) {
			return checkpoint{}, errors.New("not a checkpoint note nor SIZE:ROOT")
		}
		c := checkpoint{size: n}
		hex.Decode(c.root[:], []byte(root))
		return c, nil
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	text, _, _ := strings.Cut(s, "\n\n")
	return parseBody(text + "\n")
}

// noteKey is a note verifier key: "<name>+<key hash>+<base64(0x01 || ed25519 key)>".
type noteKey struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

func parseNoteKey(s string) (*noteKey, error) {
	name, rest, _ := strings.Cut(s, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(key64)
	hash, herr := strconv.ParseUint(hash16, 16, 32)
	if name == "" || len(hash16) != 8 || herr != nil || err != nil || len(raw) != 33 || raw[0] != 1 {
		return nil, errors.New("malformed note verifier key")
	}
	// The key hash is the first 4 bytes of SHA-256(name || "\n" || 0x01 || key).
	sum := sha256.Sum256(append([]byte(name+"\n"), raw...))
	if binary.BigEndian.Uint32(sum[:4]) != uint32(hash) {
		return nil, errors.New("note verifier key hash does not match its key")
	}
	return &noteKey{name: name, hash: uint32(hash), pub: raw[1:]}, nil
}

// openNote verifies a signed note (text, a blank line, then lines
// "— <name> <base64(key hash || signature)>") with k, then returns its text.
func openNote(note string, k *noteKey) (string, error) {
	text, sigs, ok := strings.Cut(note, "\n\n")
	if !ok || !utf8.ValidString(note) {
		return "", errors.New("not a signed note")
	}
	text += "\n"
	for line := range strings.SplitSeq(strings.TrimSuffix(sigs, "\n"), "\n") {
		name, sig64, _ := strings.Cut(strings.TrimPrefix(line, "\u2014 "), " ")
		sig, err := base64.StdEncoding.DecodeString(sig64)
		if !strings.HasPrefix(line, "\u2014 ") || err != nil || len(sig) < 4 {
			return "", errors.New("malformed signature line")
		}
		if name == k.name && binary.BigEndian.Uint32(sig) == k.hash {
			if ed25519.Verify(k.pub, []byte(text), sig[4:]) {
				return text, nil
			}
			return "", errors.New("the signature by the pinned checkpoint key does not verify")
		}
	}
	return "", errors.New("no signature by the pinned checkpoint key")
}

type verdict struct {
	Status                  string   `json:"status"`
	Verdict                 string   `json:"verdict"`
	CanonicalSpineValid     bool     `json:"canonical_spine_valid"`
	StrictTableValid        bool     `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64   `json:"strict_table_break_at_block"`
	Failures                []string `json:"failures"`
	Warnings                []string `json:"warnings"`
	Notes                   []string `json:"notes"`
	Head                    string   `json:"head"`
	WitnessQuorum           int      `json:"witness_quorum"`
	Checkpoint              string   `json:"checkpoint"` // keep it for --checkpoint next time
	Rows                    int      `json:"rows_checked"`
	PayloadsChecked         int      `json:"payloads_checked"`
	Server                  *served  `json:"server,omitempty"` // URL mode: what the host reported
	verdicts                []string
	head                    block // the head row (index, hash, timestamp), for --state in tiles mode
}

func (v *verdict) pass() bool { return len(v.verdicts) == 0 }

func (v *verdict) fail(name, msg string) {
	v.verdicts = append(v.verdicts, name)
	v.Failures = append(v.Failures, msg)
}

func failed(name, msg string) *verdict {
	v := &verdict{Failures: []string{}, Warnings: []string{}, Notes: []string{}}
	v.fail(name, msg)
	return v.finish()
}

// verify checks every row (on all cores), then the spine, the checkpoints
// and the strict table, and names the most serious failure.
func verify(rows []block, p *pins) *verdict {
	v := &verdict{Rows: len(rows), Failures: []string{}, Warnings: []string{}, Notes: []string{}, WitnessQuorum: p.quorum}
	checks := make([]rowCheck, len(rows))
	var wg sync.WaitGroup
	for w := range runtime.NumCPU() {
		wg.Go(func() {
			for i := w; i < len(rows); i += runtime.NumCPU() {
				checks[i] = checkRow(rows[i], p.keys, p.quorum)
			}
		})
	}
	wg.Wait()
	for _, b := range rows {
		if b.Payload != nil {
			v.PayloadsChecked++
		}
	}
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
	v.Head, v.head = fmt.Sprintf("%d %s", rows[head].Index, rows[head].Hash), rows[head]
	for i := head; ; {
		b := rows[i]
		if checks[i].problem != "" {
			v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: %s", b.Index, checks[i].problem))
			break
		}
		if b.Index == 0 || b.PrevHash == zeroHash {
			if b.Index != 0 || b.PrevHash != zeroHash {
				v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: only block 0 may have a zero prev_hash", b.Index))
			} else if b.Hash != p.genesis {
				v.fail("FAIL_GENESIS_MISMATCH", fmt.Sprintf("the spine reaches genesis %s, not the pinned %s", b.Hash, p.genesis))
			}
			break
		}
		prev, ok := byHash[b.PrevHash]
		if !ok || rows[prev].Index >= b.Index {
			v.fail("FAIL_CANONICAL_SPINE_BROKEN", fmt.Sprintf("spine block %d: prev_hash %s names no earlier block", b.Index, b.PrevHash))
			break
		}
		if checks[i].time.Before(checks[prev].time) {
			v.Warnings = append(v.Warnings, fmt.Sprintf("block %d's timestamp is before block %d's (timestamps go backwards along the spine)", b.Index, rows[prev].Index))
		}
		i = prev
	}
	slices.Reverse(v.Warnings)
	v.CanonicalSpineValid = len(v.verdicts) == 0

	// The checkpoints: the Merkle root over every row, in file order.
	leaves := make([][32]byte, len(rows))
	for i := range checks {
		leaves[i] = checks[i].leaf
	}
	n := int64(len(rows))
	if c := p.remembered; c != nil {
		switch {
		case c.origin != "" && p.origin != "" && c.origin != p.origin:
			v.fail("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the remembered checkpoint is of log %q, the pinned log is %q", c.origin, p.origin))
		case c.size > n:
			v.fail("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the table has %d rows, the remembered checkpoint %d: truncated or rolled back", n, c.size))
		case merkleRoot(leaves[:c.size]) != c.root:
			v.fail("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the Merkle root over the first %d rows is not the remembered one: a row was replaced, removed or reordered, or history rewritten", c.size))
		}
	}
	origin, signedNote := p.origin, ""
	if p.presented != "" {
		text, err := p.presented, error(nil)
		if p.cpKey != nil {
			text, err = openNote(p.presented, p.cpKey)
		} else {
			text, _, _ = strings.Cut(text, "\n\n")
			text += "\n"
			v.Notes = append(v.Notes, "the presented checkpoint's signature is not checked: no checkpoint key is pinned (--keys)")
		}
		var c checkpoint
		if err == nil {
			c, err = parseBody(text)
		}
		switch {
		case err != nil:
			v.fail("FAIL_CHECKPOINT_INVALID", "presented checkpoint: "+err.Error())
		case p.origin != "" && c.origin != p.origin:
			v.fail("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("presented checkpoint: it is of log %q, the pinned log is %q", c.origin, p.origin))
		case c.size > n:
			v.fail("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("presented checkpoint: it covers %d rows, the table has %d", c.size, n))
		case merkleRoot(leaves[:c.size]) != c.root:
			v.fail("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("presented checkpoint: its root is not the Merkle root of the first %d rows", c.size))
		default:
			if origin == "" {
				origin = c.origin
			}
			if c.size == n && p.cpKey != nil {
				signedNote = p.presented
			}
		}
	}
	switch root := merkleRoot(leaves); {
	case signedNote != "":
		v.Checkpoint = signedNote
	case origin != "":
		v.Checkpoint = checkpoint{origin: origin, size: n, root: root}.body()
	default:
		v.Checkpoint = fmt.Sprintf("%d:%s\n", n, hex.EncodeToString(root[:]))
	}

	// The strict table, in file order.
	for i, b := range rows {
		wantIndex, wantPrev, msg := int64(0), zeroHash, ""
		if i > 0 {
			wantIndex, wantPrev = rows[i-1].Index+1, rows[i-1].Hash
		}
		switch {
		case checks[i].problem != "":
			v.fail("FAIL_STRICT_TABLE_INVALID_ROW", fmt.Sprintf("row %d is invalid: %s", b.Index, checks[i].problem))
		case b.Index != wantIndex:
			msg = fmt.Sprintf("row %d: index should be %d", b.Index, wantIndex)
		case b.PrevHash != wantPrev:
			msg = fmt.Sprintf("row %d: prev_hash is not the hash of row %d", b.Index, rows[i-1].Index)
			for _, s := range p.seams {
				switch {
				case s.Block != b.Index:
				case s.Hash == b.Hash && s.PrevHash == b.PrevHash:
					v.Notes = append(v.Notes, fmt.Sprintf("documented seam at block %d: %s", b.Index, s.Reason))
					msg = ""
				default:
					msg += fmt.Sprintf(" (the seam pinned at block %d names hash %s and prev_hash %s: a different row)", s.Block, s.Hash, s.PrevHash)
				}
			}
			if msg != "" {
				for _, s := range p.infoSeams {
					if s.Block == b.Index && s.Hash == b.Hash && s.PrevHash == b.PrevHash {
						v.Notes = append(v.Notes, fmt.Sprintf("%s lists a seam at block %d (%s) that you have not pinned; if you trust it, pin it with --seam %d:%s:%s or with the trust document (--keys)",
							p.source, b.Index, s.Reason, b.Index, b.Hash, b.PrevHash))
					}
				}
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
	if p.keysFrom == p.source {
		v.Notes = append(v.Notes, "the keys and the genesis are "+p.source+"'s own: that proves only that it agrees with itself; pin the trust document with --keys")
	}
	return v.finish()
}

// finish names the verdict: the first failure found, most serious first.
func (v *verdict) finish() *verdict {
	v.Status, v.Verdict = "ok", "PASS"
	for _, name := range []string{"FAIL_UNREADABLE_EXPORT", "FAIL_UNREACHABLE_HOST", "FAIL_UNREADABLE_HOST_RESPONSE", "FAIL_EMPTY_CHAIN", "FAIL_GENESIS_MISMATCH",
		"FAIL_CANONICAL_SPINE_BROKEN", "FAIL_CHECKPOINT_NOT_EXTENDED", "FAIL_CHECKPOINT_INVALID", "FAIL_STRICT_TABLE_INVALID_ROW",
		"FAIL_UNDOCUMENTED_STRICT_BREAK", "FAIL_HOST_DISAGREES", "FAIL_STALE_RESPONSE"} {
		if slices.Contains(v.verdicts, name) && v.Status == "ok" {
			v.Status, v.Verdict = "fail", name
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
	if v.Head != "" {
		fmt.Fprintf(w, "  canonical_spine_valid        %v\n  strict_table_valid           %v\n", v.CanonicalSpineValid, v.StrictTableValid)
		if v.StrictTableBreakAtBlock != nil {
			fmt.Fprintf(w, "  strict_table_break_at_block  %d\n", *v.StrictTableBreakAtBlock)
		}
		fmt.Fprintf(w, "  rows checked                 %d (payloads checked: %d; witness quorum %d)\n  head                         %s\n", v.Rows, v.PayloadsChecked, v.WitnessQuorum, v.Head)
		fmt.Fprintf(w, "  checkpoint (keep it; pass --checkpoint or --state next time):\n    %s\n", strings.ReplaceAll(strings.TrimSuffix(v.Checkpoint, "\n"), "\n", "\n    "))
	}
	if v.Server != nil {
		fmt.Fprintf(w, "  host verdict                 %s (canonical_spine_valid %v)\n", v.Server.Verdict, v.Server.CanonicalSpineValid)
		fmt.Fprintf(w, "  host generated_at            %s\n", strings.Join(v.Server.GeneratedAt, ", "))
	}
	for _, s := range v.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", s)
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

// fetchError is a failed fetch: unreachable (no HTTP answer) or unreadable
// (an answer that is not what the endpoint serves).
type fetchError struct {
	unreachable bool
	err         error
}

func (e *fetchError) Error() string { return e.err.Error() }

// verifyHost reads the host's public endpoints and verifies the rows. The
// rows are decoded as strictly as an export's lines. The host's keys and
// genesis are used only when the auditor pinned none; its seams and its
// verdict are information.
func verifyHost(base string, p *pins, now func() time.Time, maxAge time.Duration) *verdict {
	base = strings.TrimSuffix(base, "/")
	srv := &served{}
	var status struct {
		Keys    []key `json:"keys"`
		Genesis struct {
			Hash string `json:"hash"`
		} `json:"genesis"`
		SignedCheckpoint string `json:"signed_checkpoint"`
		DocumentedSeams  []seam `json:"documented_seams"`
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
	fetchFailed := func(err error) *verdict {
		var fe *fetchError
		if errors.As(err, &fe) && fe.unreachable {
			return failed("FAIL_UNREACHABLE_HOST", err.Error())
		}
		return failed("FAIL_UNREADABLE_HOST_RESPONSE", err.Error())
	}
	for _, get := range []struct {
		path string
		into any
	}{{"/api/chain/status", &status}, {"/api/ledger/strict-table", &table}, {"/api/ledger/verify", &reported}} {
		at, err := fetchJSON(base+get.path, get.into)
		if err != nil {
			return fetchFailed(err)
		}
		srv.endpoints = append(srv.endpoints, get.path)
		srv.generated = append(srv.generated, at)
	}
	if len(status.Keys) == 0 && p.keys == nil {
		var published struct {
			Keys []key `json:"keys"`
		}
		if _, err := fetchJSON(base+"/keys.json", &published); err != nil {
			return fetchFailed(err)
		}
		status.Keys = published.Keys
	}
	srv.Verdict, srv.CanonicalSpineValid = reported.Verdict, reported.CanonicalSpineValid
	srv.StrictTableValid, srv.StrictTableBreakAtBlock = reported.StrictTableValid, reported.StrictTableBreakAtBlock
	p.source = "the host"
	if err := p.fromSource(status.Keys, status.Genesis.Hash); err != nil {
		return failed("FAIL_UNREADABLE_HOST_RESPONSE", base+"/api/chain/status: "+err.Error())
	}
	p.presented, p.infoSeams = status.SignedCheckpoint, append(table.DocumentedSeams, status.DocumentedSeams...)
	// The host annotates rows with on_spine and break; they are its claims,
	// so they are accepted and ignored: the verdict is recomputed below.
	members := []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses", "?on_spine", "?break"}
	rows := make([]block, len(table.Rows))
	for i, raw := range table.Rows {
		var err error
		if rows[i], err = decodeBlock(raw, members); err != nil {
			return failed("FAIL_UNREADABLE_HOST_RESPONSE", fmt.Sprintf("%s: row %d: %v", base+"/api/ledger/strict-table", i, err))
		}
	}
	return compareWithHost(verify(rows, p), srv, now(), maxAge)
}

// fetchJSON GETs one endpoint into v and returns its generated_at (zero
// when absent).
func fetchJSON(url string, v any) (time.Time, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return time.Time{}, &fetchError{err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "verify-ledger")
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, &fetchError{unreachable: true, err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return time.Time{}, &fetchError{unreachable: true, err: fmt.Errorf("%s: %w", url, err)}
	}
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, &fetchError{err: fmt.Errorf("%s: HTTP %d: %.200s", url, resp.StatusCode, body)}
	}
	if !utf8.Valid(body) {
		return time.Time{}, &fetchError{err: fmt.Errorf("%s: invalid UTF-8", url)}
	}
	var fresh struct {
		GeneratedAt time.Time `json:"generated_at"`
	}
	if err := json.Unmarshal(body, &fresh); err != nil {
		return time.Time{}, &fetchError{err: fmt.Errorf("%s: %w", url, err)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return time.Time{}, &fetchError{err: fmt.Errorf("%s: %w", url, err)}
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

// isHex reports whether s is exactly n bytes in lowercase hex.
func isHex(s string, n int) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 2*n && s == strings.ToLower(s)
}

// Tiles mode (--tiles): the log as C2SP tlog-tiles, static files that any
// host or CDN can serve: PREFIX/checkpoint (the signed note),
// PREFIX/tile/<L>/<N>[.p/<W>] (256 hashes a tile: leaf hashes at level 0,
// roots of the full tiles below at level L) and PREFIX/tile/entries/<N>[.p/<W>]
// (bundles of 256 rows, each a big-endian uint16 length then the row's
// canonical public JSON, the Merkle leaf). N is written in groups of three
// digits, all but the last prefixed with "x": 1234067 is x001/x234/067.

// tileLog reads one log from a URL prefix or a folder, every file once.
type tileLog struct {
	prefix  string
	size    int64 // the size of the verified checkpoint: which tiles exist
	cache   map[string][]byte
	fetched int
}

// get reads one file of the log; a missing one is errNotFound.
func (t *tileLog) get(name string) ([]byte, error) {
	if data, ok := t.cache[name]; ok {
		return data, nil
	}
	var data []byte
	var err error
	if isURL(t.prefix) {
		data, err = fetchFile(strings.TrimSuffix(t.prefix, "/") + "/" + name)
	} else {
		data, err = os.ReadFile(strings.TrimSuffix(t.prefix, "/") + "/" + name)
		if errors.Is(err, os.ErrNotExist) {
			err = errNotFound
		} else if err != nil {
			err = &fetchError{unreachable: true, err: err}
		}
	}
	if err != nil {
		return nil, err
	}
	t.fetched++
	t.cache[name] = data
	return data, nil
}

var errNotFound = errors.New("not found")

// fetchFile GETs one file of the log.
func fetchFile(url string) ([]byte, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, &fetchError{err: err}
	}
	req.Header.Set("User-Agent", "verify-ledger")
	resp, err := client.Do(req)
	if err != nil {
		return nil, &fetchError{unreachable: true, err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	switch {
	case err != nil:
		return nil, &fetchError{unreachable: true, err: fmt.Errorf("%s: %w", url, err)}
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", url, errNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, &fetchError{err: fmt.Errorf("%s: HTTP %s", url, resp.Status)}
	}
	return body, nil
}

// tilePath is the path of tile n at level (-1 for the entry bundles),
// partial of width w when w > 0.
func tilePath(level int, n int64, w int64) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n /= 1000; n > 0; n /= 1000 {
		s = fmt.Sprintf("x%03d/%s", n%1000, s)
	}
	if w > 0 {
		s += fmt.Sprintf(".p/%d", w)
	}
	if level < 0 {
		return "tile/entries/" + s
	}
	return fmt.Sprintf("tile/%d/%s", level, s)
}

// widthOf is the number of hashes (or entries) tile n of a level holds in
// the tree of t.size leaves.
func (t *tileLog) widthOf(level int, n int64) int64 {
	if level < 0 {
		level = 0
	}
	return min(t.size>>(8*level)-n*256, 256)
}

// tile returns the hashes of tile n at level. A partial tile that is gone
// may be read from its full tile, which then exists (tlog-tiles).
func (t *tileLog) tile(level int, n int64) ([][32]byte, error) {
	w := t.widthOf(level, n)
	if w <= 0 {
		return nil, fmt.Errorf("tile %d/%d is beyond the checkpoint", level, n)
	}
	data, err := t.get(tilePath(level, n, w%256))
	if errors.Is(err, errNotFound) && w < 256 {
		data, err = t.get(tilePath(level, n, 0))
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < 32*w || (len(data) != 32*int(w) && len(data) != 32*256) {
		return nil, &fetchError{err: fmt.Errorf("%s: %d bytes, want %d hashes", tilePath(level, n, w%256), len(data), w)}
	}
	out := make([][32]byte, w)
	for i := range out {
		copy(out[i][:], data[32*i:])
	}
	return out, nil
}

// node returns the hash of the complete node at tree level and index, from
// the tile that holds its subtree (folding up to 7 levels inside it).
func (t *tileLog) node(level int, index int64) ([32]byte, error) {
	L, k := level/8, level%8
	first := index << k // the node's first hash at level 8L
	hashes, err := t.tile(L, first/256)
	if err != nil {
		return [32]byte{}, err
	}
	lo, hi := first%256, first%256+1<<k
	if hi > int64(len(hashes)) {
		return [32]byte{}, fmt.Errorf("node %d/%d is not in the tree of %d leaves", level, index, t.size)
	}
	return merkleRoot(hashes[lo:hi]), nil
}

// bundle returns the entries of bundle n.
func (t *tileLog) bundle(n int64) ([][]byte, error) {
	w := t.widthOf(-1, n)
	data, err := t.get(tilePath(-1, n, w%256))
	if errors.Is(err, errNotFound) && w < 256 {
		data, err = t.get(tilePath(-1, n, 0))
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for len(data) >= 2 && int64(len(out)) < w {
		size := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+size {
			break
		}
		out = append(out, data[2:2+size])
		data = data[2+size:]
	}
	if int64(len(out)) != w {
		return nil, &fetchError{err: fmt.Errorf("%s: not a bundle of %d entries", tilePath(-1, n, w%256), w)}
	}
	return out, nil
}

// border returns the roots of the perfect subtrees that make up the tree
// of size leaves (at most one per level, largest first): what its root is
// computed from, and what new leaves are appended to.
func (t *tileLog) border(size int64) ([]subtree, error) {
	var out []subtree
	var lo int64
	for level := 62; level >= 0; level-- {
		if size&(1<<level) == 0 {
			continue
		}
		h, err := t.node(level, lo>>level)
		if err != nil {
			return nil, err
		}
		out = append(out, subtree{level, h})
		lo += 1 << level
	}
	return out, nil
}

type subtree struct {
	level int
	hash  [32]byte
}

// appendLeaf adds a leaf hash to a border, merging equal subtrees.
func appendLeaf(b []subtree, leaf [32]byte) []subtree {
	b = append(b, subtree{0, leaf})
	for len(b) > 1 && b[len(b)-1].level == b[len(b)-2].level {
		l, r := b[len(b)-2], b[len(b)-1]
		b = append(b[:len(b)-2], subtree{l.level + 1, nodeHash(l.hash, r.hash)})
	}
	return b
}

// rootOf folds a border into the tree's root, right to left.
func rootOf(b []subtree) [32]byte {
	if len(b) == 0 {
		return sha256.Sum256(nil)
	}
	h := b[len(b)-1].hash
	for i := len(b) - 2; i >= 0; i-- {
		h = nodeHash(b[i].hash, h)
	}
	return h
}

// tileState is what --state keeps in tiles mode: the checkpoint and the
// verdict it was given, so the next run checks only the new rows.
type tileState struct {
	Checkpoint              string `json:"checkpoint"`
	Verdict                 string `json:"verdict"`
	StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
	HeadIndex               int64  `json:"head_index"`
	HeadHash                string `json:"head_hash"`
	HeadTime                string `json:"head_timestamp"`
	Pins                    string `json:"pins"` // fingerprint of the pins the verdict was given under
}

// fingerprint names the pins a verdict depends on.
func (p *pins) fingerprint() string {
	ids := make([]string, 0, len(p.keys))
	for id, k := range p.keys {
		ids = append(ids, id+":"+k.role+":"+hex.EncodeToString(k.pub))
	}
	slices.Sort(ids)
	data, _ := json.Marshal([]any{ids, p.genesis, p.seams, p.quorum, p.origin})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// verifyTiles verifies the log at prefix from its tiles. The checkpoint
// must carry the pinned checkpoint key's signature. With a remembered
// checkpoint, the tiles must hash to its root at its size (the log was
// extended, not rewritten); with the state of an earlier pass (prev), only
// the new rows are fetched and checked, and they must hash, appended to
// the remembered tree, to the new root. Otherwise every bundle is fetched
// and the rows verified as an export's.
func verifyTiles(prefix string, p *pins, prev *tileState) *verdict {
	t := &tileLog{prefix: prefix, cache: map[string][]byte{}}
	fetchFailed := func(err error) *verdict {
		var fe *fetchError
		if errors.As(err, &fe) && fe.unreachable {
			return failed("FAIL_UNREACHABLE_HOST", err.Error())
		}
		return failed("FAIL_UNREADABLE_HOST_RESPONSE", err.Error())
	}
	note, err := t.get("checkpoint")
	if err != nil {
		return fetchFailed(err)
	}
	text, err := openNote(string(note), p.cpKey)
	var cp checkpoint
	if err == nil {
		cp, err = parseBody(text)
	}
	switch {
	case err != nil:
		return failed("FAIL_CHECKPOINT_INVALID", "the log's checkpoint: "+err.Error())
	case cp.origin != p.origin:
		return failed("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("the log's checkpoint is of log %q, the pinned log is %q", cp.origin, p.origin))
	case cp.size == 0:
		return failed("FAIL_EMPTY_CHAIN", "the log's checkpoint has no rows")
	}
	if n, why := cosigned(string(note), text, p.cosigners); n < p.needCosigs {
		return failed("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("the log's checkpoint carries %d valid cosignature(s) by the pinned witnesses, %d required%s", n, p.needCosigs, why))
	}
	t.size = cp.size
	var from []subtree // the remembered tree's border, when there is one
	if c := p.remembered; c != nil {
		switch {
		case c.origin != "" && c.origin != p.origin:
			return failed("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the remembered checkpoint is of log %q, the pinned log is %q", c.origin, p.origin))
		case c.size > cp.size:
			return failed("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the log has %d rows, the remembered checkpoint %d: truncated or rolled back", cp.size, c.size))
		}
		if from, err = t.border(c.size); err != nil {
			return fetchFailed(err)
		}
		if rootOf(from) != c.root {
			return failed("FAIL_CHECKPOINT_NOT_EXTENDED", fmt.Sprintf("the log's tiles do not hash to the remembered checkpoint's root at %d rows: the log was rewritten, or its tiles are corrupt", c.size))
		}
	}
	if prev != nil && p.remembered != nil && prev.HeadIndex == p.remembered.size-1 && prev.Pins == p.fingerprint() {
		if v := verifyNewRows(t, p, prev, from, cp, string(note)); v != nil {
			return v
		}
	}
	// Every row, from the bundles.
	border, err := t.border(cp.size)
	if err != nil {
		return fetchFailed(err)
	}
	if rootOf(border) != cp.root {
		return failed("FAIL_CHECKPOINT_INVALID", "the log's hash tiles do not hash to its signed checkpoint's root: the tiles are corrupt")
	}
	var rows []block
	var leaves [][32]byte
	for n := int64(0); n*256 < cp.size; n++ {
		entries, err := t.bundle(n)
		if err != nil {
			return fetchFailed(err)
		}
		for i, e := range entries {
			b, err := decodeBlock(e, rowMembers)
			if err != nil {
				return failed("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("entry %d of the log is not a row: %v", n*256+int64(i), err))
			}
			rows, leaves = append(rows, b), append(leaves, leafHash(e))
		}
	}
	// The bundles must be the log's before their rows are judged.
	if merkleRoot(leaves) != cp.root {
		return failed("FAIL_CHECKPOINT_INVALID", "the log's entry bundles do not hash to its signed checkpoint's root: the bundles are corrupt")
	}
	p.presented, p.source = string(note), "the log"
	v := verify(rows, p)
	v.Notes = append(v.Notes, fmt.Sprintf("read from the log's tiles: %d files", t.fetched))
	return v
}

// rowMembers are the members of a row's canonical public form.
var rowMembers = []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses"}

// verifyNewRows checks rows [remembered size, cp.size) against the state
// of an earlier pass: each row valid and linked to the one before it, the
// first to the remembered head, and the rows, appended to the remembered
// tree, hashing to the new root. It returns nil when the new rows need the
// full verification (a break, a seam, a timestamp going back).
func verifyNewRows(t *tileLog, p *pins, prev *tileState, from []subtree, cp checkpoint, note string) *verdict {
	v := &verdict{Failures: []string{}, Warnings: []string{}, Notes: []string{}, WitnessQuorum: p.quorum}
	last := block{Index: prev.HeadIndex, Hash: prev.HeadHash, Timestamp: prev.HeadTime}
	lastTime, _ := time.Parse(time.RFC3339Nano, prev.HeadTime)
	border := slices.Clone(from)
	var rows []block
	for n := p.remembered.size / 256; n*256 < cp.size; n++ {
		entries, err := t.bundle(n)
		if err != nil {
			return failed("FAIL_UNREADABLE_HOST_RESPONSE", err.Error())
		}
		for i, e := range entries {
			if n*256+int64(i) < p.remembered.size {
				continue
			}
			b, err := decodeBlock(e, rowMembers)
			if err != nil {
				return failed("FAIL_CHECKPOINT_INVALID", fmt.Sprintf("entry %d of the log is not a row: %v", n*256+int64(i), err))
			}
			border, rows = appendLeaf(border, leafHash(e)), append(rows, b)
		}
	}
	// The new bundles must be the log's before their rows are judged.
	if rootOf(border) != cp.root {
		return failed("FAIL_CHECKPOINT_INVALID", "the log's new entries do not hash to its signed checkpoint's root: the bundles are corrupt, or the log rewritten")
	}
	for _, b := range rows {
		c := checkRow(b, p.keys, p.quorum)
		if c.problem != "" || b.Index != last.Index+1 || b.PrevHash != last.Hash || c.time.Before(lastTime) {
			return nil
		}
		last, lastTime = b, c.time
	}
	v.Rows = len(rows)
	v.CanonicalSpineValid, v.StrictTableValid = true, prev.StrictTableBreakAtBlock == nil
	v.StrictTableBreakAtBlock = prev.StrictTableBreakAtBlock
	v.Head, v.head, v.Checkpoint = fmt.Sprintf("%d %s", last.Index, last.Hash), last, note
	v.Notes = append(v.Notes, fmt.Sprintf("incremental: %d new row(s) checked from the log's tiles (%d files read); the %d rows before were verified by an earlier run (--state), and the tiles prove them unchanged",
		len(rows), t.fetched, p.remembered.size))
	return v.finish()
}

// parseCosignerKey reads a log witness's key: "<name>+<key id>+<base64(0x04
// || ed25519 key)>" (c2sp.org/tlog-cosignature, Ed25519 cosignature/v1).
func parseCosignerKey(s string) (*noteKey, error) {
	name, rest, _ := strings.Cut(s, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(key64)
	hash, herr := strconv.ParseUint(hash16, 16, 32)
	if name == "" || len(hash16) != 8 || herr != nil || err != nil || len(raw) != 33 || raw[0] != 4 {
		return nil, errors.New("not an Ed25519 cosignature/v1 key (type 0x04)")
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), raw...))
	if binary.BigEndian.Uint32(sum[:4]) != uint32(hash) {
		return nil, errors.New("its key id does not match its key")
	}
	return &noteKey{name: name, hash: uint32(hash), pub: raw[1:]}, nil
}

// cosigned counts the pinned witnesses with a valid cosignature on the
// checkpoint text among the note's signature lines: the line's key name
// and id match, and the Ed25519 signature after the 8-byte timestamp
// verifies over "cosignature/v1\ntime <timestamp>\n" + text. It says why
// when a pinned witness's line does not verify.
func cosigned(signedNote, text string, pinned []*noteKey) (int, string) {
	_, sigs, _ := strings.Cut(signedNote, "\n\n")
	valid, why := 0, ""
	for _, k := range pinned {
		for line := range strings.SplitSeq(strings.TrimSuffix(sigs, "\n"), "\n") {
			name, sig64, _ := strings.Cut(strings.TrimPrefix(line, "\u2014 "), " ")
			sig, err := base64.StdEncoding.DecodeString(sig64)
			if name != k.name || err != nil || len(sig) != 4+8+ed25519.SignatureSize || binary.BigEndian.Uint32(sig) != k.hash {
				continue
			}
			ts := binary.BigEndian.Uint64(sig[4:])
			msg := "cosignature/v1\ntime " + strconv.FormatUint(ts, 10) + "\n" + text
			if ts < 1<<63 && ed25519.Verify(k.pub, []byte(msg), sig[12:]) {
				valid++
				break
			}
			why = fmt.Sprintf(" (the cosignature by %s does not verify)", k.name)
		}
	}
	return valid, why
}

// receiptMembers are the members of a node's receipt; every one is a
// string. The signature covers the first eight (receiptSigned).
var receiptMembers = []string{"receipt_id", "route", "node", "provider", "model", "request_sha256", "response_sha256", "issued_at", "key_id", "signature"}

const receiptSigned = 8

// runReceipt is receipt mode: see the package documentation.
func runReceipt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify-ledger receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keysFile := fs.String("keys", "", "trust document (the host's /keys.json) pinning the node keys; required")
	requestFile := fs.String("request", "", "the JSON request body the receipt should cover")
	responseFile := fs.String("response", "", "the JSON response the receipt should cover (default: RECEIPT.json when it is a whole answer)")
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintln(stderr, "verify-ledger receipt: "+msg)
		}
		fmt.Fprintln(stderr, "usage: verify-ledger receipt --keys FILE [--request FILE] [--response FILE] RECEIPT.json")
		return 64
	}
	if err := fs.Parse(args); err != nil {
		return usage("")
	}
	if fs.NArg() != 1 || *keysFile == "" {
		return usage("give --keys and exactly one receipt file: a receipt a verifier checks against keys it did not pin proves nothing")
	}
	t, err := readTrust(*keysFile)
	if err != nil {
		return usage("--keys: " + err.Error())
	}
	keys, err := pinKeys(t.Keys)
	if err != nil {
		return usage("--keys: " + err.Error())
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return usage(err.Error())
	}
	var request, response []byte
	for _, f := range []struct {
		name string
		out  *[]byte
	}{{*requestFile, &request}, {*responseFile, &response}} {
		if f.name != "" {
			if *f.out, err = os.ReadFile(f.name); err != nil {
				return usage(err.Error())
			}
		}
	}
	r, err := checkReceipt(data, keys, request, response)
	if err != nil {
		fmt.Fprintf(stdout, "RECEIPT NOT VERIFIED\n%v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "RECEIPT VERIFIED\nnode     %s\nroute    %s\nprovider %s\nmodel    %s\nissued   %s\nkey      %s\nchecked  %s\n",
		r.values["node"], r.values["route"], r.values["provider"], r.values["model"], r.values["issued_at"], r.values["key_id"], strings.Join(r.checked, ", "))
	return 0
}

// checkedReceipt is a receipt that passed every check.
type checkedReceipt struct {
	values  map[string]string
	checked []string
}

// checkReceipt verifies a receipt (or an answer carrying one, then also
// the response) against the pinned keys and, when given, the request and
// response. An error names the member that failed.
func checkReceipt(data []byte, keys map[string]pinnedKey, request, response []byte) (checkedReceipt, error) {
	if _, err := canonicalJSON(data); err != nil {
		return checkedReceipt{}, fmt.Errorf("receipt: not valid JSON: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return checkedReceipt{}, errors.New("receipt: not a JSON object")
	}
	if inner, ok := top["receipt"]; ok {
		if response == nil {
			response = data
		}
		data = inner
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return checkedReceipt{}, errors.New("receipt: not a JSON object")
	}
	values := map[string]string{}
	for _, name := range receiptMembers {
		var s string
		if v, ok := raw[name]; !ok || len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return checkedReceipt{}, fmt.Errorf("%s: missing or not a string", name)
		}
		values[name] = s
	}
	for name := range raw {
		if !slices.Contains(receiptMembers, name) {
			return checkedReceipt{}, fmt.Errorf("%s: not a member of a receipt", name)
		}
	}
	for _, m := range []struct {
		name string
		ok   bool
	}{
		{"receipt_id", isHex(values["receipt_id"], 16)}, {"request_sha256", isHex(values["request_sha256"], 32)},
		{"response_sha256", isHex(values["response_sha256"], 32)}, {"signature", isHex(values["signature"], ed25519.SignatureSize)},
	} {
		if !m.ok {
			return checkedReceipt{}, fmt.Errorf("%s: not in its documented form (lowercase hex of the right length)", m.name)
		}
	}
	k, ok := keys[values["key_id"]]
	switch {
	case !ok:
		return checkedReceipt{}, fmt.Errorf("key_id: %s is not a pinned key", values["key_id"])
	case k.role != "node":
		return checkedReceipt{}, fmt.Errorf("key_id: %s is a %s key, not a node key", values["key_id"], k.role)
	case k.node != values["node"]:
		return checkedReceipt{}, fmt.Errorf("node: the key %s is pinned for %s, the receipt names %s", values["key_id"], k.node, values["node"])
	}
	// The signed payload: the eight stated members, names in code-point
	// order (all ASCII), every value a string.
	names := slices.Sorted(slices.Values(receiptMembers[:receiptSigned]))
	payload := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			payload = append(payload, ',')
		}
		payload = appendString(append(appendString(payload, name), ':'), values[name])
	}
	payload = append(payload, '}')
	sig, _ := hex.DecodeString(values["signature"])
	if !ed25519.Verify(k.pub, payload, sig) {
		return checkedReceipt{}, fmt.Errorf("signature: not a signature of %s over the receipt: a member was changed after signing, or another key signed", values["key_id"])
	}
	r := checkedReceipt{values: values, checked: []string{"form", "key", "signature"}}
	for _, ev := range []struct {
		name   string
		body   []byte
		strip  bool
		member string
	}{{"request", request, false, "request_sha256"}, {"response", response, true, "response_sha256"}} {
		if ev.body == nil {
			continue
		}
		sum, err := bodyHash(ev.body, ev.strip)
		if err != nil {
			return checkedReceipt{}, fmt.Errorf("%s: %w", ev.name, err)
		}
		if sum != values[ev.member] {
			return checkedReceipt{}, fmt.Errorf("%s: the %s given hashes to %s", ev.member, ev.name, sum)
		}
		r.checked = append(r.checked, ev.member)
	}
	return r, nil
}

// bodyHash is SHA-256 of a JSON body's RFC 8785 form, in hex; with strip,
// the body is an object whose top-level "receipt" member is left out.
func bodyHash(body []byte, strip bool) (string, error) {
	canon, err := canonicalJSON(body)
	if err != nil {
		return "", err
	}
	if strip {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			return "", errors.New("not a JSON object")
		}
		delete(obj, "receipt")
		rest, err := json.Marshal(obj)
		if err != nil {
			return "", err
		}
		if canon, err = canonicalJSON(rest); err != nil {
			return "", err
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
