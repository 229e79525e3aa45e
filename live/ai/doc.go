// Package ai is the AI nodes: the provider layer, the offline responder,
// the node registry and the pulse. The HTTP routes stay thin: decode a
// request type of requests.go, call the registry, encode the Reply.
//
//	reg, err := ai.NewRegistry(cfg, ai.Options{Keys: keys, Documents: docs})
//	node, err := reg.Chat(ai.DefaultChatNode)     // or reg.Airlock("Ember")
//	reply, err := node.Reply(ctx, message)        // or node.Stream(ctx, message, send)
//	pulse, err := reg.Pulse(ctx, topic)           // every chat node at once
//
// Providers. A Provider answers one message with no history and no
// session context (Complete), or streams the answer as text deltas for
// server-sent events (Stream). Anthropic (Messages API) and OpenAI (Chat
// Completions; any compatible server such as Ollama or vLLM through its
// base URL) are built on the official SDKs from an SDKConfig alone: no
// environment variable of the machine changes them, and they never retry.
// Offline needs nothing: it ranks the passages of the published documents
// (BM25 over Snowball-stemmed words) and answers with the best ones quoted
// verbatim and cited, or says plainly (NoAnswer) that it has nothing; it
// never writes a sentence of its own about the subject.
//
// Nodes. The Roster is fixed by the specification: chat nodes S1_PLEX,
// S2_CASE, S3_TARS, S4_KIPP, S6_FORGE and the airlock nodes S5_LOCUS
// (Ember) and S17_LUMEN (Lumen). Config (the "ai" section of site.yaml)
// chooses each node's provider, model, base URL and the name of the
// environment variable holding its key; cmd reads the keys and passes them
// in Options.Keys, so this package never reads the environment. A node
// whose key is missing answers offline and its Reply.Notice says so. Every
// Reply names the node, the provider and the model that answered.
//
// Towns and the judge. A town's node answers with ReplyWith, given a
// Briefing (its town's memory, at most MaxMemoryBytes, and the node that
// sent the message in an inter-node exchange): the SDK providers receive
// it in the system content (Request.Instructions), the offline responder
// quotes the memory entries that match, verbatim. Airlock nodes take no
// briefing. Registry.Judge is the provider Config.Judge names for the
// evaluation pipeline's AI scan (nil without one or without its key):
// Judge.Ask sends the pipeline's instructions and text as they are and
// returns the reply verbatim for the pipeline to parse.
//
// Errors. A message is checked (CheckText) before any provider call.
// Routes map: ErrUnknownNode, ErrEmptyText, ErrTextTooLong, ErrInvalidText
// to 400; ErrProviderFailed to 502; ErrProviderTimeout to 504. Provider
// failures are *ProviderError values whose text names the node, provider,
// model and a Reason from a fixed vocabulary, and never carries what the
// provider said (which may echo the request or a key).
//
// Everything here is safe for concurrent use; a Registry is immutable once
// built. The package never logs except through Options.Logger.
package ai
