package price

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

// TestEmbedded: the built-in table is valid, written as the generator
// writes it, says where each price came from, and prices the demo
// upstream's models (backend/config/default.yaml) as quotagate's own.
func TestEmbedded(t *testing.T) {
	tb := Embedded()
	if !bytes.Equal(tb.Encode(), embedded) {
		t.Error("prices.json is not as internal/gen writes it: regenerate it (SOURCE.md) rather than editing it")
	}
	if !strings.Contains(tb.Source, "models.dev") || !strings.Contains(tb.Source, "f3fc692299671838c7c65fd8126bf84d81a2e817") {
		t.Errorf("source %q does not name models.dev and its commit", tb.Source)
	}
	for _, demo := range []string{"demo-chat", "demo-reasoner"} {
		e, ok := tb.Models[demo]
		if !ok || !strings.HasPrefix(e.Origin, "quotagate:") {
			t.Errorf("%s: %+v; want a price of quotagate's own", demo, e)
		}
	}
	for id, e := range tb.Models {
		if !strings.HasPrefix(e.Origin, "quotagate:") && e.Origin != "models.dev providers/"+strings.SplitN(e.Origin[len("models.dev providers/"):], "/", 2)[0]+"/models/"+id+".toml" {
			t.Errorf("%s: origin %q is not its models.dev file", id, e.Origin)
		}
	}
	tb.Models["demo-chat"] = Entry{}
	if Embedded().Models["demo-chat"].Output == 0 {
		t.Error("a caller's change to its copy reached the embedded table")
	}
}

func TestParseTableRefuses(t *testing.T) {
	const good = `{"input":"1","cached_input":"0.1","cache_write":"1.25","output":"5"}`
	for _, c := range []struct{ name, file, says string }{
		{"not JSON", `prices`, "not a price table"},
		{"an array", `[]`, "not a price table"},
		{"trailing data", `{"currency":"USD","source":"s","models":{"m":` + good + `}} {}`, "more follows"},
		{"unknown key", `{"currency":"USD","source":"s","version":2,"models":{"m":` + good + `}}`, `unknown field "version"`},
		{"other currency", `{"currency":"CNY","source":"s","models":{"m":` + good + `}}`, `currency is "CNY"`},
		{"no source", `{"currency":"USD","models":{"m":` + good + `}}`, "source is missing"},
		{"no models", `{"currency":"USD","source":"s"}`, "models is missing"},
		{"models an array", `{"currency":"USD","source":"s","models":[]}`, "not an object"},
		{"empty models", `{"currency":"USD","source":"s","models":{}}`, "models is empty"},
		{"duplicate model", `{"currency":"USD","source":"s","models":{"m":` + good + `,"m":` + good + `}}`, `models["m"] appears twice`},
		{"misspelt price", `{"currency":"USD","source":"s","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1","output":"5","ouput":"5"}}}`, `unknown field "ouput"`},
		{"missing price", `{"currency":"USD","source":"s","models":{"m":{"input":"1","cached_input":"0.1","output":"5"}}}`, `models["m"]: cache_write is missing`},
		{"number price", `{"currency":"USD","source":"s","models":{"m":{"input":1,"cached_input":"0.1","cache_write":"1","output":"5"}}}`, `models["m"]`},
		{"negative price", `{"currency":"USD","source":"s","models":{"m":{"input":"-1","cached_input":"0.1","cache_write":"1","output":"5"}}}`, `models["m"]: input: "-1" is negative`},
		{"7 places", `{"currency":"USD","source":"s","models":{"m":{"input":"1","cached_input":"0.1234567","cache_write":"1","output":"5"}}}`, `cached_input: "0.1234567" has 7 decimal places`},
		{"exponent", `{"currency":"USD","source":"s","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1","output":"5e-6"}}}`, `output: "5e-6" is not a plain decimal`},
		{"empty id", `{"currency":"USD","source":"s","models":{"":` + good + `}}`, "1 to 256 characters"},
		{"spaced id", `{"currency":"USD","source":"s","models":{" m":` + good + `}}`, "1 to 256 characters"},
		{"control in id", `{"currency":"USD","source":"s","models":{"m\u0001n":` + good + `}}`, "control characters"},
	} {
		_, err := ParseTable([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
	}
}

// TestParseTableListsEveryProblem: one pass names all that is wrong.
func TestParseTableListsEveryProblem(t *testing.T) {
	_, err := ParseTable([]byte(`{"currency":"EUR","source":"s","models":{"a":{"input":"x","cached_input":"1","cache_write":"1","output":"1"},"b":{"input":"1","cached_input":"1","cache_write":"1","output":"-2"}}}`))
	for _, want := range []string{`currency is "EUR"`, `models["a"]: input: "x"`, `models["b"]: output: "-2"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want it to say %q", err, want)
		}
	}
}

// FuzzParseTable: a price file is refused, or read into a table that
// writes and reads back unchanged.
func FuzzParseTable(f *testing.F) {
	f.Add(embedded)
	f.Add([]byte(`{"currency":"USD","source":"s","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1.25","output":"5","origin":"o"}}}`))
	f.Add([]byte(`{"currency":"USD","source":"s","models":{"m":{"input":"1"},"m":{}}}`))
	f.Add([]byte(`{"currency":"USD","source":"s","models":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ParseTable(data)
		if err != nil {
			return
		}
		out := tb.Encode()
		back, err := ParseTable(out)
		if err != nil {
			t.Fatalf("a table read from %q writes %q, which is refused: %v", data, out, err)
		}
		if back.Source != tb.Source || !maps.Equal(back.Models, tb.Models) {
			t.Fatalf("a table changed on a round trip: %+v became %+v", tb, back)
		}
		if !bytes.Equal(back.Encode(), out) {
			t.Fatal("Encode is not deterministic")
		}
	})
}
