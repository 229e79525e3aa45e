package main

import (
	"slices"
	"strings"
	"testing"
)

func TestNginxConfig(t *testing.T) {
	conf := nginxConfig("/w/nginx", "/w/public", 4321, true)
	for _, want := range []string{
		"user root;\n", "worker_processes auto;", "pid /w/nginx/nginx.pid;", "error_log /w/nginx/error.log warn;",
		"access_log off;", "sendfile on;", "keepalive_requests 1000000;", "text/html html;",
		"client_body_temp_path /w/nginx/client_body;", "scgi_temp_path /w/nginx/scgi;",
		"listen 127.0.0.1:4321;", "root /w/public;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(nginxConfig("/w/nginx", "/w/public", 4321, false), "user ") {
		t.Error("user directive without root")
	}
	if strings.Count(conf, "{") != strings.Count(conf, "}") {
		t.Errorf("unbalanced braces:\n%s", conf)
	}
}

func TestNginxArgv(t *testing.T) {
	got := nginxArgv("/usr/sbin/nginx", "/w/nginx", "/w/nginx/nginx.conf")
	want := []string{"/usr/sbin/nginx", "-p", "/w/nginx", "-c", "/w/nginx/nginx.conf", "-e", "/w/nginx/error.log", "-g", "daemon off;"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
