// Package memory is the AI nodes' memories as values: what a caller asks to
// remember (Draft), a stored memory with the chain block that witnesses it
// (Memory), the health of the dual write (Status, Report), the errors a
// store answers with, and the bearer tokens that authorize writes (Tokens).
// It holds no store: live/memory/dual keeps memories in Badger and a SQL
// store, so the routes and the towns use these types without reaching a
// database.
//
//	m, err := memory.New(memory.Draft{NodeID: "case", Content: raw}, now) // validate, derive the id
//	err = tokens.Check(r.Header.Get("Authorization"))                    // ErrNoToken, ErrBadToken
//
// A memory's id, content_hash and canonical content derive from its node
// and content (see Memory), so anyone can recompute them; Check says
// whether they agree and CheckWitness whether a chain block witnesses it.
package memory
