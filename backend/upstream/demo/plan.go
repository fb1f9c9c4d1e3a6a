package demo

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Kind names what a plan does to the call.
type Kind string

const (
	KindNormal     Kind = "normal"      // the text in parts, usage as OpenAI reports it, then [DONE]
	KindCut        Kind = "cut"         // CutAfter parts, then the connection is closed: no usage, no [DONE]
	KindNoUsage    Kind = "no-usage"    // the text and [DONE], never a usage object
	KindFalseUsage Kind = "false-usage" // usage that contradicts the text sent (completion 0)
	KindUsageText  Kind = "usage-text"  // output text shaped like a usage JSON object, then the true usage
	KindSlow       Kind = "slow"        // normal, with ChunkDelay (default 200ms) between parts
	KindError      Kind = "error"       // an HTTP error (Status, Body, RetryAfter) before any output
	KindStall      Kind = "stall"       // headers, then nothing until the client goes away
	// KindErrorMid: CutAfter parts, then the protocol's in-stream error event
	// (chat: a data {"error":…} object; Responses: an `error` event;
	// Messages: an `error` event) whose message is Body, by default one that
	// echoes the key the request carried, as a provider's "Incorrect API key
	// provided: sk-…" does, so a test sees what reaches the client); then the stream ends, no usage, no end
	// marker. Not streaming: a 200 whose JSON body is that error object.
	KindErrorMid Kind = "error-mid"
)

// DefaultText is the reply of a plan without Text; it says what it is.
const DefaultText = "This is a simulated reply from the quotagate demo model; no real model was called."

// UsageShapedText is the output of KindUsageText without Text: data that looks like accounting.
const UsageShapedText = `{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`

// Plan is what the demo upstream does with one request.
type Plan struct {
	Kind       Kind
	Text       string        // output text; DefaultText (or UsageShapedText) when empty
	Parts      []string      // explicit parts; when empty Text is split into Chunks parts
	Chunks     int           // number of parts Text is split into (0: one part per word)
	Repeat     int           // send the part sequence this many times (0 or 1: once)
	ChunkDelay time.Duration // pause before each part
	UsageDelay time.Duration // pause after the finish_reason chunk, before the usage chunk and [DONE] (real providers take ~300 ms); Responses: after the last output_item.done, before response.completed; Messages: after message_delta (its usage), before message_stop
	LatencyMin time.Duration // pause before the response headers, drawn from [LatencyMin, LatencyMax]
	LatencyMax time.Duration
	CutAfter   int    // KindCut: parts sent before the connection is closed
	Status     int    // KindError: HTTP status (default 503)
	Body       string // KindError: response body (default an OpenAI-shaped error); KindErrorMid: the error's message
	RetryAfter string // KindError: Retry-After header value, if any
	// Times limits KindError to the first Times requests that carry this same
	// plan (0: every one); later ones are answered normally. It scripts
	// "429, then success" for a caller that retries with the same plan.
	Times int
	// Call scripts a function call: the answer is a call of the function
	// named Call with the JSON arguments Args (default "{}") instead of text
	// — unless the conversation already ends with a function's output, which
	// the demo then acknowledges in text (a round trip needs no second plan).
	Call string
	Args string
}

// PlanHeader is the request header that chooses a plan per request, written
// as a URL query: "kind=cut&after=1&parts=part,more". Keys: kind, text (URL-escaped),
// parts (comma-separated), chunks, repeat, delay, usage_delay, latency ("2s" or "2s-5s"),
// after, status, body, retry_after, times, call, args.
const PlanHeader = "X-Demo-Plan"

// DirectivePrefix starts a last user message that chooses the plan in-band,
// for clients that cannot set headers (for example through the gateway):
// "/demo kind=cut&after=2". The directive is part of the input like any text.
const DirectivePrefix = "/demo "

// ParsePlan reads the query form of PlanHeader.
func ParsePlan(s string) (Plan, error) {
	q, err := url.ParseQuery(strings.TrimSpace(s))
	if err != nil {
		return Plan{}, fmt.Errorf("demo plan %q: %w", s, err)
	}
	var p Plan
	p.Kind = Kind(q.Get("kind"))
	switch p.Kind {
	case "":
		p.Kind = KindNormal
	case KindNormal, KindCut, KindNoUsage, KindFalseUsage, KindUsageText, KindSlow, KindError, KindStall, KindErrorMid:
	default:
		return Plan{}, fmt.Errorf("demo plan: unknown kind %q", p.Kind)
	}
	p.Text = q.Get("text")
	if v := q.Get("parts"); v != "" {
		p.Parts = strings.Split(v, ",")
	}
	ints := []struct {
		key string
		dst *int
	}{{"chunks", &p.Chunks}, {"repeat", &p.Repeat}, {"after", &p.CutAfter}, {"status", &p.Status}, {"times", &p.Times}}
	for _, f := range ints {
		if v := q.Get(f.key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Plan{}, fmt.Errorf("demo plan: %s=%q is not a count", f.key, v)
			}
			*f.dst = n
		}
	}
	if v := q.Get("delay"); v != "" {
		if p.ChunkDelay, err = time.ParseDuration(v); err != nil {
			return Plan{}, fmt.Errorf("demo plan: delay: %w", err)
		}
	}
	if v := q.Get("usage_delay"); v != "" {
		if p.UsageDelay, err = time.ParseDuration(v); err != nil {
			return Plan{}, fmt.Errorf("demo plan: usage_delay: %w", err)
		}
	}
	if v := q.Get("latency"); v != "" {
		lo, hi, _ := strings.Cut(v, "-")
		if p.LatencyMin, err = time.ParseDuration(lo); err != nil {
			return Plan{}, fmt.Errorf("demo plan: latency: %w", err)
		}
		p.LatencyMax = p.LatencyMin
		if hi != "" {
			if p.LatencyMax, err = time.ParseDuration(hi); err != nil {
				return Plan{}, fmt.Errorf("demo plan: latency: %w", err)
			}
		}
	}
	p.Body = q.Get("body")
	p.RetryAfter = q.Get("retry_after")
	p.Call = q.Get("call")
	p.Args = q.Get("args")
	if p.Call == "" && p.Args != "" {
		return Plan{}, fmt.Errorf("demo plan: args without call")
	}
	return p, nil
}

// Encode returns the PlanHeader form of p (the fields ParsePlan reads).
func (p Plan) Encode() string {
	q := url.Values{}
	q.Set("kind", string(p.Kind))
	if p.Text != "" {
		q.Set("text", p.Text)
	}
	if len(p.Parts) > 0 {
		q.Set("parts", strings.Join(p.Parts, ","))
	}
	for k, v := range map[string]int{"chunks": p.Chunks, "repeat": p.Repeat, "after": p.CutAfter, "status": p.Status, "times": p.Times} {
		if v != 0 {
			q.Set(k, strconv.Itoa(v))
		}
	}
	if p.ChunkDelay > 0 {
		q.Set("delay", p.ChunkDelay.String())
	}
	if p.UsageDelay > 0 {
		q.Set("usage_delay", p.UsageDelay.String())
	}
	if p.LatencyMax > 0 {
		q.Set("latency", p.LatencyMin.String()+"-"+p.LatencyMax.String())
	}
	if p.Body != "" {
		q.Set("body", p.Body)
	}
	if p.RetryAfter != "" {
		q.Set("retry_after", p.RetryAfter)
	}
	if p.Call != "" {
		q.Set("call", p.Call)
	}
	if p.Args != "" {
		q.Set("args", p.Args)
	}
	return q.Encode()
}

// text returns the whole output the plan intends to send.
func (p Plan) text() string {
	if len(p.Parts) > 0 {
		return strings.Repeat(strings.Join(p.Parts, ""), max(p.Repeat, 1))
	}
	return strings.Repeat(p.baseText(), max(p.Repeat, 1))
}

func (p Plan) baseText() string {
	if p.Text != "" {
		return p.Text
	}
	if p.Kind == KindUsageText {
		return UsageShapedText
	}
	return DefaultText
}

// parts returns the output in the pieces it is sent in.
func (p Plan) parts() []string {
	one := p.Parts
	if len(one) == 0 {
		one = split(p.baseText(), p.Chunks)
	}
	n := max(p.Repeat, 1)
	out := make([]string, 0, len(one)*n)
	for range n {
		out = append(out, one...)
	}
	return out
}

// split cuts s into n parts on rune boundaries (n ≤ 0: one part per word,
// each keeping its trailing space).
func split(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	if n <= 0 {
		var out []string
		for len(s) > 0 {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				out = append(out, s)
				break
			}
			out = append(out, s[:i+1])
			s = s[i+1:]
		}
		return out
	}
	r := []rune(s)
	if n > len(r) {
		n = len(r)
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}
