package gateway

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The /v1 surface's own error codes (ledger's status table has them).
const (
	codeNotFound         = ledger.CodeNotFound         // 404: no such /v1 endpoint
	codeMethodNotAllowed = ledger.CodeMethodNotAllowed // 405, with Allow
	codeRequestTimeout   = ledger.CodeRequestTimeout   // 408: the body did not arrive in time
)

// DefaultRunsListLimit and MaxRunsListLimit bound GET /v1/runs?limit=N.
const (
	DefaultRunsListLimit = 20
	MaxRunsListLimit     = 100
)

// unknownRoute answers a /v1 path no handler serves: 405 with Allow when
// the path exists under another method, else 404 not_found.
func (g *Gateway) unknownRoute(w http.ResponseWriter, r *http.Request) {
	if allow := g.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, ledger.Errorf(codeMethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		return
	}
	writeError(w, ledger.Errorf(codeNotFound, "%s %s is not a quotagate endpoint (see GET /v1/models; chat is POST /v1/chat/completions)", r.Method, r.URL.Path))
}

// allowed lists the methods the mux serves r's path with, by asking the
// mux itself, so every door's routes count without a second table.
func (g *Gateway) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := g.mux.Handler(probe); pattern != "" && pattern != catchAll {
			out = append(out, m)
		}
	}
	if len(out) > 0 && contains(out, http.MethodGet) {
		out = append(out, http.MethodHead)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// catchAll is the mux pattern of unknownRoute.
const catchAll = "/v1/"

// MissingV1 answers an OpenAI path sent without its /v1 prefix (a base URL
// of http://127.0.0.1:8787 instead of …/v1): 404 with an error that says
// what to change. The server routes those paths here.
func MissingV1(w http.ResponseWriter, r *http.Request) {
	writeError(w, ledger.Errorf(codeNotFound,
		"%s %s is not a quotagate endpoint: add /v1 to your base URL (http://%s/v1), e.g. POST /v1%s",
		r.Method, r.URL.Path, r.Host, r.URL.Path))
}

// MissingV1Paths are the OpenAI and Anthropic paths MissingV1 explains.
var MissingV1Paths = []string{"/chat/completions", "/completions", "/embeddings", "/responses", "/messages", "/models"}

// model answers GET /v1/models/{id}: the model object, or 404
// model_not_found for a model this key may not use.
func (g *Gateway) model(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	id := r.PathValue("id")
	if u := g.upstreamFor(id); u != nil && t.AllowsModel(id) {
		writeJSON(w, http.StatusOK, modelObject{ID: id, Object: "model", OwnedBy: u.Name()})
		return
	}
	writeError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", id))
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// listRuns answers GET /v1/runs?limit=N: the caller's own most recent
// runs, newest first — how a client that aborted before it saw X-Run-Id
// finds its run.
func (g *Gateway) listRuns(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	limit := DefaultRunsListLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxRunsListLimit {
			writeError(w, ledger.Errorf(ledger.CodeInvalidRequest, "limit must be a whole number from 1 to %d", MaxRunsListLimit))
			return
		}
		limit = n
	}
	runs, err := g.opts.Store.Runs(r.Context(), ledger.RunFilter{TenantID: t.ID, Limit: limit})
	if err != nil {
		g.internal(w, err, "runs of "+t.ID)
		return
	}
	if runs == nil {
		runs = []ledger.Run{}
	}
	writeJSON(w, http.StatusOK, struct {
		Object string       `json:"object"`
		Data   []ledger.Run `json:"data"`
	}{"list", runs})
}

// bearerKey returns the credential of an Authorization header whose scheme is
// Bearer in any case (RFC 9110 §11.1: the scheme is case-insensitive).
func bearerKey(auth string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// readBody reads a request body of at most RequestBytesMax bytes within
// BodyTimeout: a body that trickles in is cut with 408 instead of holding
// a goroutine and its buffer (30 stalled bodies once cost 245 MB).
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.opts.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.RequestBytesMax))
	_ = rc.SetReadDeadline(time.Time{})
	if err == nil {
		return body, nil
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, ledger.Errorf(ledger.CodeRequestTooLarge, "the request body is larger than %d bytes", g.opts.RequestBytesMax)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, ledger.Errorf(codeRequestTimeout, "the request body did not arrive within %s", g.opts.BodyTimeout)
	}
	return nil, ledger.Errorf(ledger.CodeInvalidRequest, "the request body could not be read: %v", err)
}

// answerType reports whether an upstream's 2xx Content-Type is an answer:
// an event stream for a stream, JSON otherwise. Anything else (an HTML
// login page of a proxy, text/plain) must not be relayed as a clean, empty
// completion.
func answerType(contentType string, stream bool) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	if stream {
		return mt == "text/event-stream"
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
