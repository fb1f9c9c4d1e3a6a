package gateway

import (
	"net/http"

	"github.com/quotagate/quotagate/backend/gemini"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/wire"
)

// geminiCatchAll is the mux pattern of geminiUnknown.
const geminiCatchAll = "/v1beta/"

// geminiRoutes adds the Gemini API's surface to mux.
func (g *Gateway) geminiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1beta/models/{call}", g.geminiCall)
	// The Google Gen AI SDKs call the stable API version, /v1, unless told
	// otherwise; the same door serves it (OpenAI's /v1/models is GET only).
	mux.HandleFunc("POST /v1/models/{call}", g.geminiCall)
	mux.HandleFunc("GET /v1beta/models", g.geminiModels)
	mux.HandleFunc("GET /v1beta/models/{model}", g.geminiModel)
	mux.HandleFunc(geminiCatchAll, geminiUnknown)
}

// geminiKey refuses a Gemini request whose key is in the URL (?key=, which
// Google accepts but which ends up in proxy and server logs) or missing,
// with a sentence naming the header Gemini clients send.
func geminiKey(r *http.Request) error {
	if r.URL.Query().Has("key") {
		return ledger.Errorf(ledger.CodeInvalidAPIKey, "quotagate does not take keys in the URL (?key=…), where they end up in logs; send it as \"x-goog-api-key: <key>\"")
	}
	if _, err := requestKey(r); err != nil {
		return ledger.Errorf(ledger.CodeInvalidAPIKey, "send your quotagate key as \"x-goog-api-key: <key>\" (GEMINI_API_KEY) or \"Authorization: Bearer <key>\"")
	}
	return nil
}

// geminiCall is POST /v1beta/models/{model}:{method}: generateContent and
// streamGenerateContent?alt=sse go through the run core; countTokens is
// answered here.
func (g *Gateway) geminiCall(w http.ResponseWriter, r *http.Request) {
	if err := geminiKey(r); err != nil {
		writeGeminiError(w, err)
		return
	}
	model, method := splitModelMethod(r.PathValue("call"))
	switch method {
	case geminiGenerate:
		g.admit(geminiDoor{model: model}, w, r)
	case geminiStream:
		if alt := r.URL.Query().Get("alt"); alt != "sse" {
			writeGeminiError(w, ledger.Errorf(ledger.CodeInvalidRequest, "quotagate streams Gemini answers as server-sent events only: add ?alt=sse (got alt=%q)", alt))
			return
		}
		g.admit(geminiDoor{model: model, stream: true}, w, r)
	case geminiCount:
		if t, ok := g.authenticated(geminiDoor{}, w, r); ok {
			g.geminiCountTokens(w, r, t, model)
		}
	default:
		writeGeminiError(w, ledger.Errorf(codeNotFound, "%s is not a Gemini method quotagate serves (generateContent, streamGenerateContent, countTokens)", method))
	}
}

// geminiUnknown answers a /v1beta path no handler serves.
func geminiUnknown(w http.ResponseWriter, r *http.Request) {
	writeGeminiError(w, ledger.Errorf(codeNotFound, "%s %s is not a quotagate endpoint (the Gemini API is POST /v1beta/models/{model}:generateContent)", r.Method, r.URL.Path))
}

// geminiCountTokens is POST …:countTokens, answered locally with the
// reserve's own count of the input ({"totalTokens": N}); no upstream call.
// The body is {"contents": …} or {"generateContentRequest": {…}}.
func (g *Gateway) geminiCountTokens(w http.ResponseWriter, r *http.Request, t ledger.Tenant, model string) {
	body, err := g.readBody(w, r)
	if err != nil {
		writeGeminiError(w, err)
		return
	}
	if fields, err := wire.Fields(body); err == nil {
		if inner, ok := wire.Get(fields, "generateContentRequest"); ok {
			body = inner
		}
	}
	req, err := gemini.ParseRequest(model, false, body)
	if err != nil {
		writeGeminiError(w, invalidRequest(err))
		return
	}
	if g.upstreamFor(model) == nil || !t.AllowsModel(model) {
		writeGeminiError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", model))
		return
	}
	e := g.opts.Reserve.Estimate(g.opts.Meter, GeminiMeterRequest(req))
	writeJSON(w, http.StatusOK, map[string]ledger.Units{"totalTokens": e.InputUnits})
}

// geminiModel is one model in Google's shape. quotagate knows no model's
// limits: the input limit is the request size limit (no body can carry
// more tokens than bytes), the output limit the cap reserved when a call
// gives none.
type geminiModel struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	InputTokenLimit            int64    `json:"inputTokenLimit"`
	OutputTokenLimit           int64    `json:"outputTokenLimit"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

func (g *Gateway) geminiModelOf(id, upstreamName string) geminiModel {
	out := g.opts.Reserve.DefaultOutputUnits
	if out <= 0 {
		out = meter.DefaultOutputUnits
	}
	return geminiModel{Name: "models/" + id, BaseModelID: id, Version: "quotagate", DisplayName: id + " (via " + upstreamName + ")",
		InputTokenLimit: g.opts.RequestBytesMax, OutputTokenLimit: int64(out),
		SupportedGenerationMethods: []string{geminiGenerate, geminiStream, geminiCount}}
}

// geminiModels is GET /v1beta/models: the models this key may use.
func (g *Gateway) geminiModels(w http.ResponseWriter, r *http.Request) {
	t, ok := g.geminiTenant(w, r)
	if !ok {
		return
	}
	list := struct {
		Models []geminiModel `json:"models"`
	}{Models: []geminiModel{}}
	for _, rt := range g.table.order { // each name once, however many upstreams serve it
		if t.AllowsModel(rt.model) {
			list.Models = append(list.Models, g.geminiModelOf(rt.model, rt.first().up.Name()))
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// geminiModel is GET /v1beta/models/{model}, or 404 for a model this key
// may not use.
func (g *Gateway) geminiModel(w http.ResponseWriter, r *http.Request) {
	t, ok := g.geminiTenant(w, r)
	if !ok {
		return
	}
	id := r.PathValue("model")
	if u := g.upstreamFor(id); u != nil && t.AllowsModel(id) {
		writeJSON(w, http.StatusOK, g.geminiModelOf(id, u.Name()))
		return
	}
	writeGeminiError(w, ledger.Errorf(ledger.CodeModelNotFound, "the model %q does not exist or is not available to this key", id))
}

// geminiTenant authenticates a Gemini GET, answering its refusal.
func (g *Gateway) geminiTenant(w http.ResponseWriter, r *http.Request) (ledger.Tenant, bool) {
	if err := geminiKey(r); err != nil {
		writeGeminiError(w, err)
		return ledger.Tenant{}, false
	}
	return g.authenticated(geminiDoor{}, w, r)
}
