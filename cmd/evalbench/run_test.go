package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &out, &errw); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
	for _, args := range [][]string{{"-split", "train"}, {"-misses", "-1"}, {"extra"}, {"-nope"}} {
		errw.Reset()
		if code := run(context.Background(), args, &out, &errw); code != exitUsage || errw.Len() == 0 {
			t.Errorf("%v: exit %d, %q", args, code, errw.String())
		}
	}
}

func TestReportWithoutSharedSet(t *testing.T) {
	var out, errw bytes.Buffer
	args := []string{"-content", "../../content", "-corpus", "../../live/eval/testdata/corpus", "-shared", filepath.Join(t.TempDir(), "absent"), "-speed=false"}
	if code := run(context.Background(), args, &out, &errw); code != exitOK {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	for _, want := range []string{"Project corpus, heldout split", "substring recall", "Shared held-out set not found", "project held-out: false-positive rate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSharedSetCanBeSkipped(t *testing.T) {
	var out, errw bytes.Buffer
	args := []string{"-content", "../../content", "-corpus", "../../live/eval/testdata/corpus", "-shared", "", "-speed=false"}
	if code := run(context.Background(), args, &out, &errw); code != exitOK {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if !strings.Contains(out.String(), "Shared held-out set: not measured") || strings.Contains(out.String(), "shared held-out: ") {
		t.Errorf("the shared set was not skipped:\n%s", out.String())
	}
}

func TestSharedSetIsCheckedAgainstItsManifest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("manifest.json", `{"counts":{"attack":2,"benign":1}}`)
	write("attacks.jsonl", `{"id":"a:1","label":"attack","category":"jailbreak","text":"x"}`+"\n")
	write("benign.jsonl", `{"id":"b:1","label":"benign","category":"ordinary","text":"y"}`+"\n")
	if _, err := readShared(dir); err == nil || !strings.Contains(err.Error(), "manifest says 2") {
		t.Errorf("a truncated set was accepted: %v", err)
	}
	if got := sharedCategory("exfiltration"); got != "prompt_extraction" {
		t.Errorf("exfiltration maps to %q", got)
	}
}

func TestTexts2K(t *testing.T) {
	texts := texts2K(nil)
	if len(texts) != 0 {
		t.Errorf("%d texts from nothing", len(texts))
	}
}
