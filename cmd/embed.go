// Package cmd holds the commands of proofsite and the artifacts they ship.
package cmd

import _ "embed"

// VerifyLedgerSource is the source of the standalone verifier,
// cmd/verify-ledger/main.go, byte for byte. The site build publishes it,
// with its SHA-256, as the downloadable verifier auditors read and run.
//
//go:embed verify-ledger/main.go
var VerifyLedgerSource []byte
