// Package cmd holds the commands of proofsite and the artifacts they ship.
package cmd

import _ "embed"

// VerifyLedgerSource is the source of the standalone verifier,
// cmd/verify-ledger/main.go, byte for byte. The site build publishes it,
// with its SHA-256, as the downloadable verifier auditors read and run.
//
//go:embed verify-ledger/main.go
var VerifyLedgerSource []byte

// BrowserVerifierSource is the browser's verifier, cmd/verify-tiles.js:
// the home page runs it to compute the ledger's verdict in the visitor's
// browser from the public tiles. The build publishes it with its SHA-256.
//
//go:embed verify-tiles.js
var BrowserVerifierSource []byte
