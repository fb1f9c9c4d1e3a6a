package lookup_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/upstream/lookup"
)

// An http-json lookup reads the figure at its fields, sends the key only
// to the upstream's own host, and refuses answers that cannot be evidence.
func TestHTTPJSON(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       lookup.Figure
		refused    string
		notYet     bool
	}{
		{"Figure", `{"u":{"in":"12","out":7,"c":2},"id":"call-1","cost":0.5}`, 200, lookup.Figure{ProviderID: "call-1", Input: 12, Output: 7, Cached: 2, Cost: "0.5"}, "", false},
		{"NotYet", `{}`, 404, lookup.Figure{}, "", true},
		{"OtherID", `{"u":{"in":1,"out":1},"id":"call-2"}`, 200, lookup.Figure{}, `about call "call-2"`, false},
		{"Missing", `{"u":{"in":1}}`, 200, lookup.Figure{}, "has no u.out", false},
		{"Negative", `{"u":{"in":1,"out":-3}}`, 200, lookup.Figure{}, "not a whole number", false},
		{"NotJSON", `<html>`, 200, lookup.Figure{}, "not JSON", false},
		{"CachedAboveInput", `{"u":{"in":1,"out":1,"c":5}}`, 200, lookup.Figure{}, "cached tokens 5 exceed", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth = r.Header.Get("Authorization")
				if r.URL.Path != "/usage/call-1" {
					t.Errorf("path %s", r.URL.Path)
				}
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			cl, err := lookup.New(lookup.Spec{Kind: lookup.KindHTTPJSON, URL: srv.URL + "/usage/{id}", Input: "u.in", Output: "u.out", Cached: "u.c", Cost: "cost", ID: "id"},
				srv.URL+"/v1", "sk-1", srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := cl.Look(context.Background(), "call-1")
			var r *lookup.Refusal
			switch {
			case c.notYet:
				if !errors.Is(err, lookup.ErrNotYet) {
					t.Fatalf("err %v", err)
				}
			case c.refused != "":
				if !errors.As(err, &r) || !strings.Contains(r.Why, c.refused) {
					t.Fatalf("err %v, want refusal %q", err, c.refused)
				}
			case err != nil || f != c.want:
				t.Fatalf("got %+v %v, want %+v", f, err, c.want)
			}
			if auth != "Bearer sk-1" {
				t.Fatalf("auth %q", auth)
			}
		})
	}
}

// A lookup at another host than the upstream's gets no key.
func TestKeyStaysHome(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Write([]byte(`{"in":1,"out":1}`))
	}))
	defer srv.Close()
	cl, err := lookup.New(lookup.Spec{Kind: lookup.KindHTTPJSON, URL: srv.URL + "/u?id={id}", Input: "in", Output: "out"},
		"https://api.provider.example/v1", "sk-1", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Look(context.Background(), "a&b"); err != nil || auth != "" {
		t.Fatalf("err %v auth %q", err, auth)
	}
}
