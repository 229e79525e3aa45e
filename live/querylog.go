package live

import "sync"

// queryRing is how many recent query hashes queryLog keeps.
const queryRing = 1024

// queryLog is everything the server keeps of /api/v1/query: a count of
// queries per node (by designation), and the request and response SHA-256 of the most
// recent queryRing queries (the hashes their receipts state). Never the
// text, the client's address or anything else. The per-client rate counter
// of POST is the shared limiter's. Safe for concurrent use.
type queryLog struct {
	mu     sync.Mutex
	counts map[string]int64
	ring   [queryRing]queryHashes
	next   int // index of the next entry to write
	total  int64
}

// queryHashes are the hashes of one query, hex as in its receipt.
type queryHashes struct{ Request, Response string }

func (l *queryLog) record(node, request, response string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[string]int64{}
	}
	l.counts[node]++
	l.total++
	l.ring[l.next] = queryHashes{request, response}
	l.next = (l.next + 1) % queryRing
}

// snapshot returns the counts and the kept hashes, oldest first.
func (l *queryLog) snapshot() (map[string]int64, []queryHashes) {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := make(map[string]int64, len(l.counts))
	for k, v := range l.counts {
		counts[k] = v
	}
	n := int(min(l.total, queryRing))
	hashes := make([]queryHashes, 0, n)
	for i := range n {
		hashes = append(hashes, l.ring[(l.next-n+i+queryRing)%queryRing])
	}
	return counts, hashes
}
