package content

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestFrontMatterLanguages reads the same front matter written in YAML, TOML
// and JSON, with Hugo's key spellings, and expects the same page.
func TestFrontMatterLanguages(t *testing.T) {
	body := "## Notes\n\nThe body.\n"
	sources := map[string]string{
		"YAML": `---
title: "Release notes"
description: What changed.
date: 2026-03-01T09:30:00+01:00
lastmod: 2026-03-02
publishDate: 2026-03-01
expiryDate: 2030-01-01T00:00:00Z
draft: false
weight: 3
tags: [Go, "Release Notes"]
categories: news
aliases: [/old/notes/, notes-old.html]
slug: notes
author: Ada
---
` + body,
		"TOML": `+++
title = "Release notes"
description = "What changed."
date = 2026-03-01T09:30:00+01:00
lastmod = 2026-03-02
publishDate = "2026-03-01"
expiryDate = 2030-01-01T00:00:00Z
draft = false
weight = 3
tags = ["Go", "Release Notes"]
categories = "news"
aliases = ["/old/notes/", "notes-old.html"]
slug = "notes"
author = "Ada"
+++
` + body,
		"JSON": `{
  "title": "Release notes",
  "description": "What changed.",
  "date": "2026-03-01T09:30:00+01:00",
  "lastmod": "2026-03-02",
  "publishDate": "2026-03-01",
  "expiryDate": "2030-01-01T00:00:00Z",
  "draft": false,
  "weight": 3,
  "tags": ["Go", "Release Notes"],
  "categories": "news",
  "aliases": ["/old/notes/", "notes-old.html"],
  "slug": "notes",
  "author": "Ada"
}
` + body,
	}
	want := &Page{
		Source: "pages/posts/release.md", Kind: KindPage, Path: "pages/posts/notes.html",
		Title: "Release notes", Summary: "What changed.", SummaryWritten: true, Description: "What changed.",
		Date:        time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("", 3600)),
		Lastmod:     time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		PublishDate: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		ExpiryDate:  time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Weight:      3,
		Tags:        []Term{{Name: "Go", Slug: "go"}, {Name: "Release Notes", Slug: "release-notes"}},
		Categories:  []Term{{Name: "news", Slug: "news"}},
		Aliases:     []string{"old/notes/index.html", "pages/posts/notes-old.html"}, // a relative alias is relative to the page's folder
		Params:      map[string]any{"author": "Ada"},
	}
	for lang, src := range sources {
		t.Run(lang, func(t *testing.T) {
			p, errs := parseDocument("pages/posts/release.md", []byte(src))
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			w := *want
			got := *p
			if !got.Date.Equal(w.Date) {
				t.Errorf("date %v, want %v", got.Date, w.Date)
			}
			got.Date = w.Date
			got.Body, got.BodyLine, got.Digest, got.SummaryDigest, got.pathLine, got.aliasLine = nil, 0, [32]byte{}, [32]byte{}, 0, 0
			if !reflect.DeepEqual(&got, &w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			if string(p.Body) != body {
				t.Errorf("body %q", p.Body)
			}
		})
	}
}

// TestDates reads every form of date Hugo accepts.
func TestDates(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	}
	tests := []struct {
		written string
		want    time.Time
	}{
		{"2026-01-02", utc(2026, 1, 2, 0, 0, 0)},
		{"2026-01-02T15:04:05Z", utc(2026, 1, 2, 15, 4, 5)},
		{"2026-01-02T15:04:05.123Z", time.Date(2026, 1, 2, 15, 4, 5, 123e6, time.UTC)},
		{"2026-01-02T15:04:05+02:00", time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("", 7200))},
		{"2026-01-02T15:04:05+0200", time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("", 7200))},
		{"2026-01-02T15:04:05", utc(2026, 1, 2, 15, 4, 5)},
		{"2026-01-02t15:04:05z", utc(2026, 1, 2, 15, 4, 5)},
		{"2026-01-02 15:04:05", utc(2026, 1, 2, 15, 4, 5)},
		{"2026-01-02 15:04", utc(2026, 1, 2, 15, 4, 0)},
		{"2026-01-02 15:04:05 -07:00", time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("", -7*3600))},
		{"Fri, 02 Jan 2026 15:04:05 +0000", utc(2026, 1, 2, 15, 4, 5)},
		{"2 January 2026", utc(2026, 1, 2, 0, 0, 0)},
		{"Jan 2, 2026", utc(2026, 1, 2, 0, 0, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.written, func(t *testing.T) {
			got, err := asTime(tc.written)
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
			_, gotOff := got.Zone()
			_, wantOff := tc.want.Zone()
			if gotOff != wantOff {
				t.Errorf("zone offset %d, want %d", gotOff, wantOff)
			}
		})
	}
	// Native TOML dates: an offset date-time as written, local ones in UTC.
	src := "+++\ntitle = \"T\"\ndate = 2026-01-02\nlastmod = 2026-01-03T10:00:00\npublishdate = 2026-01-01T08:00:00-05:00\n+++\n"
	p, errs := parseDocument("pages/x.md", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !p.Date.Equal(utc(2026, 1, 2, 0, 0, 0)) || p.Date.Location() != time.UTC ||
		!p.Lastmod.Equal(utc(2026, 1, 3, 10, 0, 0)) || p.Lastmod.Location() != time.UTC ||
		!p.PublishDate.Equal(utc(2026, 1, 1, 13, 0, 0)) {
		t.Errorf("TOML dates: date %v, lastmod %v, publishDate %v", p.Date, p.Lastmod, p.PublishDate)
	}
}

// TestDateFallbacks follows Hugo's defaults: a page's date comes from
// publishDate or lastmod when it has none, and lastmod from the date.
func TestDateFallbacks(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		front                        string
		date, lastmod, publish, expy time.Time
	}{
		{"date: 2026-01-02", day(2), day(2), day(2), time.Time{}},
		{"publishDate: 2026-01-03", day(3), day(3), day(3), time.Time{}},
		{"lastmod: 2026-01-04", day(4), day(4), time.Time{}, time.Time{}},
		{"date: 2026-01-02\nmodified: 2026-01-05\nunpublishdate: 2026-01-09", day(2), day(5), day(2), day(9)},
		{"pubdate: 2026-01-06", day(6), day(6), day(6), time.Time{}},
	}
	for _, tc := range tests {
		p, errs := parseDocument("pages/x.md", []byte("---\ntitle: T\n"+tc.front+"\n---\n"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if !p.Date.Equal(tc.date) || !p.Lastmod.Equal(tc.lastmod) || !p.PublishDate.Equal(tc.publish) || !p.ExpiryDate.Equal(tc.expy) {
			t.Errorf("%q: date %v lastmod %v publish %v expiry %v", tc.front, p.Date, p.Lastmod, p.PublishDate, p.ExpiryDate)
		}
	}
}

// TestSummaries: written, Hugo's <!--more--> divider, the description, or
// the first paragraph of the body.
func TestSummaries(t *testing.T) {
	tests := []struct {
		desc, front, body, summary, description, bodyOut string
	}{
		{"written", "summary: Written.\ndescription: Described.", "Body.\n", "Written.", "Described.", "Body.\n"},
		{"description", "description: Described.", "Body.\n", "Described.", "Described.", "Body.\n"},
		{"first paragraph", "", "## Heading\n\nThe *first* [paragraph](/x)\nwith `code`.\n\nThe second.\n", "The first paragraph with code.", "The first paragraph with code.", ""},
		{"more divider", "", "Before the **cut**.\n\n<!--more-->\n\nAfter.\n", "Before the cut.", "Before the cut.", "Before the **cut**.\n\n\n\nAfter.\n"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			p, errs := parseDocument("pages/x.md", []byte("---\ntitle: T\n"+tc.front+"\n---\n"+tc.body))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if p.Summary != tc.summary || p.Description != tc.description {
				t.Errorf("summary %q, description %q", p.Summary, p.Description)
			}
			if tc.bodyOut != "" && string(p.Body) != tc.bodyOut {
				t.Errorf("body %q, want %q", p.Body, tc.bodyOut)
			}
		})
	}
	long := "---\ntitle: T\n---\n" + strings.Repeat("word ", 100) + "\n"
	p, _ := parseDocument("pages/x.md", []byte(long))
	if got := len(strings.Fields(p.Summary)); got != summaryWords {
		t.Errorf("a long first paragraph gives a summary of %d words, want %d", got, summaryWords)
	}
}

// TestPagePaths: slug, url, section pages and lower-casing, as Hugo
// publishes them.
func TestPagePaths(t *testing.T) {
	tests := []struct {
		file, front, want string
		section           bool
	}{
		{"pages/about.md", "", "pages/about.html", false},
		{"pages/My Post.md", "", "pages/my-post.html", false},
		{"pages/x.md", "slug: Other_Name", "pages/other_name.html", false},
		{"pages/x.md", "url: /about/", "about/index.html", false},
		{"pages/x.md", "url: /about", "about/index.html", false},
		{"pages/x.md", "url: /about/team.html", "about/team.html", false},
		{"pages/posts/_index.md", "", "pages/posts/index.html", true},
		{"pages/posts/bundle/index.md", "", "pages/posts/bundle/index.html", false},
	}
	for _, tc := range tests {
		p, errs := parseDocument(tc.file, []byte("---\ntitle: T\n"+tc.front+"\n---\n"))
		if len(errs) > 0 {
			t.Errorf("%s: %v", tc.file, errs)
			continue
		}
		if p.Path != tc.want || p.Section != tc.section {
			t.Errorf("%s %q: path %s section %v, want %s %v", tc.file, tc.front, p.Path, p.Section, tc.want, tc.section)
		}
	}
}

// TestVisibility publishes drafts, pages to come and expired pages only when
// asked, like Hugo's --buildDrafts, --buildFuture and --buildExpired.
func TestVisibility(t *testing.T) {
	fsys := fixture(t)
	add := func(name, front string) {
		fsys["pages/"+name+".md"] = &fstest.MapFile{Data: []byte("---\ntitle: T\ndate: 2026-01-01\n" + front + "---\n")}
	}
	add("draft", "draft: true\n")
	add("future", "publishDate: 2026-07-01T00:00:00Z\n")
	add("expired", "expiryDate: 2026-05-31T23:59:59Z\n")
	add("current", "publishDate: 2026-06-01T00:00:00Z\nexpiryDate: 2026-06-02T00:00:00Z\n")
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		vis  Visibility
		want []string
	}{
		{Visibility{Now: now}, []string{"current"}},
		{Visibility{Now: now, Drafts: true}, []string{"current", "draft"}},
		{Visibility{Now: now, Future: true}, []string{"current", "future"}},
		{Visibility{Now: now, Expired: true}, []string{"current", "expired"}},
		{Visibility{Now: now.Add(48 * time.Hour), Future: true}, []string{"future"}},
	}
	for _, tc := range tests {
		s, err := NewLoader(fsys, tc.vis).Load(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range s.Pages {
			for _, name := range []string{"draft", "future", "expired", "current"} {
				if p.Source == "pages/"+name+".md" {
					got = append(got, name)
				}
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: published %q, want %q", tc.vis, got, tc.want)
		}
	}
}

// TestTermSlug makes addresses of tags as Hugo does.
func TestTermSlug(t *testing.T) {
	for name, want := range map[string]string{
		"Go": "go", "Release Notes": "release-notes", "C++": "c", "  spaced  out ": "spaced-out",
		"café au lait": "café-au-lait", "v1.8": "v1-8", "--": "",
	} {
		if got := TermSlug(name); got != want {
			t.Errorf("TermSlug(%q) = %q, want %q", name, got, want)
		}
	}
}
