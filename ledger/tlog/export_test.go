package tlog

import "golang.org/x/mod/sumdb/note"

// noteSign signs arbitrary note text (tests of malformed bodies).
func noteSign(text string, s Signer) ([]byte, error) { return note.Sign(&note.Note{Text: text}, s) }
