package main

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

func TestBareApp(t *testing.T) {
	resp, err := newBareApp().Test(httptest.NewRequest("GET", barePath, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got bareReply
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "ok" || !got.OK || got.GeneratedAt.IsZero() {
		t.Errorf("got %+v", got)
	}
}
