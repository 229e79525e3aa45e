package ledger

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/proofsite/proofsite/ledger/tlog"
)

// TrustFormat names the trust document's format.
const TrustFormat = "proofsite-trust/1"

// DefaultWitnessQuorum is the number of distinct pinned witness signatures
// every block needs when no policy says otherwise.
const DefaultWitnessQuorum = 2

// TrustDocument is the file an auditor pins: published as /keys.json, kept
// at data/keys.json, and read by every verifier (verify-ledger --keys). It
// holds everything a verifier must take from a source it trusts rather
// than from the data it verifies:
//
//	{
//	  "format": "proofsite-trust/1",
//	  "keys": [{"key_id":"ed25519:…","public_key":"…","role":"writer"}, …],
//	  "genesis_hash": "…",
//	  "documented_seams": [{"block":153,"hash":"…","prev_hash":"…","reason":"…"}],
//	  "witness_quorum": 2,
//	  "log": {"origin":"example.org/ledger","checkpoint_key":"example.org/ledger+1a2b3c4d+AQ…"}
//	}
//
// Keys have the roles writer, witness, bridge and node; only writer and
// witness keys are accepted on blocks. Every member is required; unknown
// and repeated members are refused (ParseTrustDocument).
type TrustDocument struct {
	Format          string         `json:"format"`
	Keys            []PublishedKey `json:"keys"`
	GenesisHash     Hash           `json:"genesis_hash"`
	DocumentedSeams []Seam         `json:"documented_seams"`
	WitnessQuorum   int            `json:"witness_quorum"`
	Log             LogPin         `json:"log"`
}

// LogPin names the transparency log whose checkpoints a verifier accepts:
// its origin (the first line of every checkpoint) and the note verifier key
// that signs them (tlog.VerifierKey of the writer key under the origin).
type LogPin struct {
	Origin        string `json:"origin"`
	CheckpointKey string `json:"checkpoint_key"`
}

var (
	trustFields = []string{"format", "keys", "genesis_hash", "documented_seams", "witness_quorum", "log"}
	keyFields   = []string{"key_id", "public_key", "role"}
	seamFields  = []string{"block", "hash", "prev_hash", "reason"}
	logFields   = []string{"origin", "checkpoint_key"}
)

// ParseTrustDocument reads a trust document strictly (valid UTF-8, no
// duplicate or unknown members, every member present, no nulls) and checks
// it: the keys parse and are listed once, the seams are pinned (hash and
// prev_hash) and name each block once, the quorum is between 1 and the
// number of witness keys, and the checkpoint key is a note verifier key
// named after the origin. It also accepts the legacy {"keys":[…]} form
// (KeysDocument); its other members are then zero: no genesis, no seams,
// DefaultWitnessQuorum, no log.
func ParseTrustDocument(data []byte) (TrustDocument, error) {
	if err := ValidateJSON(data); err != nil {
		return TrustDocument{}, fmt.Errorf("ledger: trust document: %w", err)
	}
	fail := func(err error) (TrustDocument, error) {
		return TrustDocument{}, fmt.Errorf("ledger: trust document: %w", err)
	}
	members, err := objectMembers(data, []string{"keys"}, trustFields)
	if err != nil {
		return fail(err)
	}
	var doc TrustDocument
	if len(members) > 1 {
		if members, err = objectMembers(data, trustFields, nil); err != nil {
			return fail(err)
		}
		if err := json.Unmarshal(members["format"], &doc.Format); err != nil || doc.Format != TrustFormat {
			return fail(fmt.Errorf("%w: format is %s, want %q", ErrInvalidKey, members["format"], TrustFormat))
		}
		if err := decodeExact(members["log"], logFields, &doc.Log); err != nil {
			return fail(err)
		}
		if doc.DocumentedSeams, err = decodeList[Seam](members, "documented_seams", seamFields); err != nil {
			return fail(err)
		}
		if err := json.Unmarshal(members["genesis_hash"], &doc.GenesisHash); err != nil {
			return fail(err)
		}
		if err := json.Unmarshal(members["witness_quorum"], &doc.WitnessQuorum); err != nil {
			return fail(err)
		}
	}
	if doc.Keys, err = decodeList[PublishedKey](members, "keys", keyFields); err != nil {
		return fail(err)
	}
	if err := doc.check(); err != nil {
		return fail(err)
	}
	return doc, nil
}

// decodeList decodes the array member name, each element an object with
// exactly the given members.
func decodeList[T any](members map[string]json.RawMessage, name string, fields []string) ([]T, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(members[name], &raws); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]T, len(raws))
	for i, raw := range raws {
		if err := decodeExact(raw, fields, &out[i]); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
		}
	}
	return out, nil
}

// decodeExact decodes an object with exactly the given members.
func decodeExact(raw json.RawMessage, fields []string, v any) error {
	if _, err := objectMembers(raw, fields, nil); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Legacy reports whether d came from the legacy {"keys":[…]} form.
func (d TrustDocument) Legacy() bool { return d.Format == "" }

func (d TrustDocument) check() error {
	ks, err := NewKeySet(d.Keys)
	if err != nil {
		return err
	}
	if d.Legacy() {
		return nil
	}
	if d.GenesisHash.IsZero() {
		return fmt.Errorf("%w: genesis_hash is zero", ErrInvalidKey)
	}
	for i, s := range d.DocumentedSeams {
		if !s.Pinned() {
			return fmt.Errorf("%w: documented seam at block %d has no hash and prev_hash: it would document nothing", ErrInvalidKey, s.Block)
		}
		if slices.ContainsFunc(d.DocumentedSeams[:i], func(o Seam) bool { return o.Block == s.Block }) {
			return fmt.Errorf("%w: documented seam at block %d listed twice", ErrInvalidKey, s.Block)
		}
	}
	if n := ks.Count(RoleWitness); d.WitnessQuorum < 1 || d.WitnessQuorum > n {
		return fmt.Errorf("%w: witness_quorum %d must be between 1 and the %d pinned witness keys", ErrInvalidKey, d.WitnessQuorum, n)
	}
	if d.Log.Origin == "" || d.Log.CheckpointKey == "" {
		return fmt.Errorf("%w: log needs an origin and a checkpoint_key", ErrInvalidKey)
	}
	v, err := tlog.NewVerifier(d.Log.CheckpointKey)
	if err != nil {
		return err
	}
	if v.Name() != d.Log.Origin {
		return fmt.Errorf("%w: checkpoint_key is named %q, the log's origin is %q", ErrInvalidKey, v.Name(), d.Log.Origin)
	}
	return nil
}

// Options returns the verification pins d holds: keys, genesis, seams,
// quorum and log. The caller adds what it remembers (Checkpoint) and what
// the source presents (PresentedCheckpoint).
func (d TrustDocument) Options() (Options, error) {
	ks, err := NewKeySet(d.Keys)
	if err != nil {
		return Options{}, err
	}
	return Options{Keys: ks, Genesis: d.GenesisHash, Seams: slices.Clone(d.DocumentedSeams), WitnessQuorum: d.WitnessQuorum, Log: d.Log}, nil
}

// NewTrustDocument builds the trust document of an instance: its keys
// (writer and witnesses from signers, plus any extra published keys such as
// Bridge keys), the genesis hash, the pinned seams, the quorum, and the log
// whose checkpoints the writer key signs under origin. It checks the
// result as ParseTrustDocument would.
func NewTrustDocument(signers Signers, extra []PublishedKey, genesis Hash, seams []Seam, quorum int, origin string) (TrustDocument, error) {
	vkey, err := tlog.VerifierKey(origin, signers.Writer.Public().key)
	if err != nil {
		return TrustDocument{}, err
	}
	d := TrustDocument{
		Format: TrustFormat, Keys: append(signers.KeySet().Published(), extra...), GenesisHash: genesis,
		DocumentedSeams: slices.Clone(seams), WitnessQuorum: quorum, Log: LogPin{Origin: origin, CheckpointKey: vkey},
	}
	if d.DocumentedSeams == nil {
		d.DocumentedSeams = []Seam{}
	}
	if err := d.check(); err != nil {
		return TrustDocument{}, fmt.Errorf("ledger: trust document: %w", err)
	}
	return d, nil
}

// TrustPolicy is the part of a trust document the organisation's
// configuration decides (site.yaml), as opposed to what the chain fixes
// (its keys and genesis, and the rows its seams are pinned to).
type TrustPolicy struct {
	BridgeKeys    []PublishedKey // published with role bridge
	Seams         []Seam         // block and reason; the hashes come from the document
	WitnessQuorum int            // 0 means DefaultWitnessQuorum
	Origin        string         // the log's origin
}

// Revise returns d under policy p: the Bridge keys replaced, the seams
// those of p (each keeping the hash and prev_hash d pins at its block, with
// p's reason), the quorum and the log's origin p's, the checkpoint key the
// writer key's under that origin. The writer, witness and node keys and the
// genesis stay. A seam at a block d does not pin is ErrSeamNotPinned.
func (d TrustDocument) Revise(p TrustPolicy) (TrustDocument, error) {
	out := TrustDocument{Format: TrustFormat, GenesisHash: d.GenesisHash, WitnessQuorum: p.WitnessQuorum, DocumentedSeams: []Seam{}}
	if out.WitnessQuorum <= 0 {
		out.WitnessQuorum = DefaultWitnessQuorum
	}
	var writer PublicKey
	for _, k := range d.Keys {
		if k.Role == RoleBridge {
			continue
		}
		if k.Role == RoleWriter {
			var err error
			if writer, err = ParsePublicKeyHex(k.PublicKey); err != nil {
				return TrustDocument{}, fmt.Errorf("ledger: trust document: %w", err)
			}
		}
		out.Keys = append(out.Keys, k)
	}
	out.Keys = append(out.Keys, p.BridgeKeys...)
	for _, s := range p.Seams {
		i := slices.IndexFunc(d.DocumentedSeams, func(o Seam) bool { return o.Block == s.Block && o.Pinned() })
		if i < 0 {
			return TrustDocument{}, fmt.Errorf("%w: block %d", ErrSeamNotPinned, s.Block)
		}
		pinned := d.DocumentedSeams[i]
		pinned.Reason = s.Reason
		out.DocumentedSeams = append(out.DocumentedSeams, pinned)
	}
	if writer.ID() == "" {
		return TrustDocument{}, fmt.Errorf("%w: the trust document pins no writer key", ErrInvalidKey)
	}
	vkey, err := tlog.VerifierKey(p.Origin, writer.key)
	if err != nil {
		return TrustDocument{}, err
	}
	out.Log = LogPin{Origin: p.Origin, CheckpointKey: vkey}
	if err := out.check(); err != nil {
		return TrustDocument{}, fmt.Errorf("ledger: trust document: %w", err)
	}
	return out, nil
}
