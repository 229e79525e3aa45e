package voice

import (
	"container/list"
	"sync"
)

// cache is a least-recently-used cache of MP3s bounded by their total
// size. A nil *cache (size below zero) caches nothing.
type cache struct {
	mu    sync.Mutex
	limit int64
	size  int64
	order *list.List // front: most recent; values are *entry
	byKey map[string]*list.Element
}

type entry struct {
	key string
	mp3 []byte
}

func newCache(limit int64) *cache {
	if limit < 0 {
		return nil
	}
	return &cache{limit: limit, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *cache) get(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).mp3, true
}

// put stores mp3 under key, evicting the least recently used entries
// until the total fits. An MP3 larger than the whole cache is not stored.
func (c *cache) put(key string, mp3 []byte) {
	if c == nil || int64(len(mp3)) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&entry{key: key, mp3: mp3})
	c.size += int64(len(mp3))
	for c.size > c.limit {
		old := c.order.Back()
		e := old.Value.(*entry)
		c.order.Remove(old)
		delete(c.byKey, e.key)
		c.size -= int64(len(e.mp3))
	}
}

// stats returns the number of entries and their total size.
func (c *cache) stats() (entries int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey), c.size
}
