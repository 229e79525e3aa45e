// Package ledger is the hash-chained, signed public ledger: blocks, their
// canonical hashing, ed25519 keys, and the two verifications that outsiders
// run.
//
// A block's public header (index, timestamp, kind, payload_hash, prev_hash,
// writer) is encoded as RFC 8785 canonical JSON; its SHA-256 is the block
// hash, which the writer key and the witness keys sign. Seal is the only
// way to make a block with a hash; DecodeBlock reads one from JSON without
// trusting it.
//
//	blocks, privs, err := ledger.SealHistory(rows, signers) // or ledger.Seal(header, signers)
//	trust, err := ledger.ParseTrustDocument(data)            // the pinned /keys.json
//	opts, err := trust.Options()                             // keys, genesis, seams, quorum, log
//	res, err := ledger.Verify(ledger.Values(blocks), opts)   // or VerifyRows, with payloads
//	fmt.Println(res.Verdict.Verdict) // PASS, PASS_WITH_DOCUMENTED_STRICT_SEAM or a FAIL_… verdict
//
// Verification is two views of the same rows. The canonical spine
// (VerifySpine) starts at the head and follows prev_hash back to the pinned
// genesis; every block on it must recompute and verify. It is the
// authoritative answer (canonical_spine_valid). The strict table
// (VerifyStrictTable) reads all rows in order and requires each to link to
// the row before it; a row that does not is a break, which passes only when
// a Seam pinned by that row's index, hash and prev_hash documents it. Every
// row must also carry the witness quorum (distinct pinned witness
// signatures, DefaultWitnessQuorum unless the trust document says
// otherwise), and, when the verifier holds it, a payload whose canonical
// SHA-256 is payload_hash. NewVerdict combines both into the Verdict of the
// public API. Verify runs the whole walk on all cores; Verdict.Extend updates
// a verdict in O(1) when one more verified block is appended. These
// functions are pure: no clock, store or network.
//
// Canonicalize wraps an RFC 8785 (JCS) implementation, jsontext's, with
// the stricter input rules signed data needs (no invalid UTF-8, lone surrogates, duplicate keys or inexact
// integers). Keys are checked when they are loaded (ParsePublicKey, NewKeySet):
// wrong lengths and small-order points are refused there, and key ids are
// always derived from the key (DeriveKeyID).
//
// Exports are JSONL (Writer, Reader): a header line with the format, the
// genesis hash, the published keys and the documented seams, then one
// block per line. History files (ReadHistory, SealHistory) are the unsigned
// past that an instance seals with its own keys on first start.
//
// What verification can and cannot show. Every edit of a published row is
// caught: a changed field no longer hashes to the row's hash, and a recomputed
// hash no longer carries valid signatures. Deleted, duplicated, reordered and
// re-linked rows break the spine or the strict table. What a chain cannot
// show about itself is what it used to be: a truncated head, or history
// rewritten and re-signed with stolen keys (an off-spine row too), is
// consistent with itself. A Checkpoint commits to every row: the RFC 6962
// Merkle root (ledger/tlog) over each row's canonical public metadata
// (Block.Leaf), as a C2SP signed note by the writer key. A verifier that
// remembers one (Options.Checkpoint) catches all of these: the rows must
// still hash to its root (FAIL_CHECKPOINT_NOT_EXTENDED). The keys, the
// genesis hash and the seams must be pinned from a source the verifier
// trusts (TrustDocument), never taken from the data being verified:
// Reader.Options never takes seams from an export header.
//
// All functions are safe for concurrent use; Block, KeySet and Verdict values
// are immutable once built.
package ledger
