package voice

import (
	"strings"
	"testing"
)

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newCache(10)
	c.put("a", []byte("aaaa"))
	c.put("b", []byte("bbbb"))
	c.get("a") // a is now the most recent
	c.put("c", []byte("cccc"))
	if _, ok := c.get("b"); ok {
		t.Error("b survived; it was the least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	if n, size := c.stats(); n != 2 || size != 8 {
		t.Errorf("stats = %d entries, %d bytes; want 2, 8", n, size)
	}
	c.put("big", []byte(strings.Repeat("x", 11)))
	if _, ok := c.get("big"); ok {
		t.Error("an entry larger than the cache was stored")
	}
	c.put("a", []byte("aaaa")) // again: no double count
	if _, size := c.stats(); size != 8 {
		t.Errorf("size %d after re-putting a, want 8", size)
	}
	var none *cache = newCache(-1)
	none.put("a", []byte("a"))
	if _, ok := none.get("a"); ok {
		t.Error("a disabled cache returned an entry")
	}
}
