// Package towns is the five live digital towns: persistent spaces of the
// chat nodes, each with a permanent wall, a chat with its node, witnessed
// inter-node exchanges and a visitor count.
//
//	t, err := towns.Open(ctx, dir, towns.Options{Charter: ch, Chain: chain, Memory: mem, Responder: r})
//	defer t.Close()
//	sig, err := t.Sign(ctx, "case", towns.SignatureDraft{Signer: "Ada", Message: "Was here."})
//	ex, err := t.Exchange(ctx, "case", towns.ExchangeRequest{To: "tars", Payload: "A second reading?"})
//	msg, err := t.Chat(ctx, "case", "What is the seam at 153?")
//	err = t.Visit(ctx, "case", clientAddr)                // once per client, town and UTC day
//
// Where each thing lives. The chain is the record: a wall signature is a
// block of kind wall_signature whose payload is the signature, and an
// inter-node exchange a block of kind inter_node_exchange whose payload
// commits to the request and the reply by their SHA-256; both are appended
// through Options.Chain, so they are durable before they are acknowledged,
// and anyone can check them against the public strict table. The towns
// store (SQLite, dir/towns.sqlite) holds what is not on the chain and an
// index of what is: the chat messages, the visitor counts, and the wall
// signatures by town, rebuilt from the chain's tail at Open (a signature
// appended just before a crash is indexed then). The store commits in WAL
// mode with synchronous=NORMAL: a commit survives a process crash, and a
// power loss can lose the last chat messages and visits, never a wall
// signature or an exchange (the chain has them, synced). Chat messages are
// not memories: memory is written only through the authenticated store
// route, so no visitor can put words into a node's memory; the town's
// memory, the memories of its node, is given to the node's provider with
// every message.
//
// Visitors are counted without storing addresses: a visit is the HMAC of
// the town and the client's address under a salt drawn at random for the
// current UTC day, kept in memory only and replaced at midnight; a client
// is counted once per town per day. A restart draws a new salt, so a
// visitor who comes back the same day after a restart counts again.
//
// A Towns is safe for concurrent use.
package towns
