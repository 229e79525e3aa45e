package ledger

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/proofsite/proofsite/ledger/tlog"
)

// Checkpoint commits to the whole table at some size: the RFC 6962 Merkle
// root over the first Size rows' leaves (Block.Leaf: every row, off-spine
// and seam rows included, in table order), under the log's origin. Its
// signed form is a C2SP tlog-checkpoint note signed by the writer key
// under a note key named after the origin (ledger/tlog). A verifier that
// remembers one catches a replaced row anywhere, a truncation and a
// rewrite with stolen keys: the rows must still hash to the same root.
type Checkpoint struct {
	Origin string `json:"origin,omitempty"`
	Size   int64  `json:"size"`
	Root   Hash   `json:"root_hash"`
}

// String returns the checkpoint's C2SP body ("<origin>\n<size>\n<base64
// root>\n"), or "SIZE:ROOT" (the root in hex) when the origin is unknown.
// ParseCheckpoint reads both.
func (c Checkpoint) String() string {
	if c.Origin == "" {
		return fmt.Sprintf("%d:%s", c.Size, c.Root)
	}
	return string(c.tlog().Body())
}

func (c Checkpoint) tlog() tlog.Checkpoint {
	return tlog.Checkpoint{Origin: c.Origin, Size: uint64(c.Size), Root: tlog.Hash(c.Root)}
}

func fromTlog(c tlog.Checkpoint) (Checkpoint, error) {
	if c.Size > maxSafeInteger {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint size %d out of range", ErrBadCheckpoint, c.Size)
	}
	return Checkpoint{Origin: c.Origin, Size: int64(c.Size), Root: Hash(c.Root)}, nil
}

// ParseCheckpoint reads a checkpoint a verifier remembers (its own file or
// flag, so trusted as it stands): a C2SP checkpoint note, with or without
// its signature lines (they are not verified here; see OpenCheckpoint), or
// the origin-less "SIZE:ROOT" form String writes. A trailing newline may be
// missing. Note that a "SIZE:HASH" kept before checkpoints became Merkle
// roots names a head block, not a root, and fails to match.
func ParseCheckpoint(s string) (Checkpoint, error) {
	if !strings.Contains(s, "\n") {
		size, root, ok := strings.Cut(s, ":")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || err != nil || n < 0 || strconv.FormatInt(n, 10) != size {
			return Checkpoint{}, fmt.Errorf("%w: %q is neither a checkpoint note nor SIZE:ROOT", ErrBadCheckpoint, s)
		}
		h, err := ParseHash(root)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("%w: %q: %w", ErrBadCheckpoint, s, err)
		}
		return Checkpoint{Size: n, Root: h}, nil
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	text, _ := tlog.SplitNote([]byte(s))
	c, err := tlog.ParseBody(text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	return fromTlog(c)
}

// OpenCheckpoint verifies a signed checkpoint note with the note verifier
// key (LogPin.CheckpointKey), then parses it.
func OpenCheckpoint(signed []byte, key string) (Checkpoint, error) {
	v, err := tlog.NewVerifier(key)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	c, err := tlog.Open(signed, v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	return fromTlog(c)
}

// SignCheckpoint returns c as a C2SP note signed by the writer key w under
// the note key name c.Origin.
func SignCheckpoint(c Checkpoint, w PrivateKey) ([]byte, error) {
	if c.Origin == "" {
		return nil, fmt.Errorf("%w: a signed checkpoint needs the log's origin", ErrBadCheckpoint)
	}
	s, err := tlog.NewSigner(c.Origin, w.priv)
	if err != nil {
		return nil, err
	}
	return tlog.Sign(c.tlog(), s)
}

// rootsOf returns the Merkle root over all the checked rows' leaves and
// over each prefix of the given sizes (negative sizes are skipped).
func rootsOf(checks []BlockCheck, sizes ...int64) (Hash, map[int64]Hash) {
	leaves := make([]tlog.Hash, len(checks))
	for i := range checks {
		leaves[i] = tlog.Hash(checks[i].Leaf)
	}
	at := make([]uint64, 0, len(sizes))
	for _, s := range sizes {
		if s >= 0 {
			at = append(at, uint64(s))
		}
	}
	all, prefix := tlog.Roots(leaves, at...)
	out := make(map[int64]Hash, len(prefix))
	for n, h := range prefix {
		out[int64(n)] = Hash(h)
	}
	return Hash(all), out
}
