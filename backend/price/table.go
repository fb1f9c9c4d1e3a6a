package price

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Table is a price list in US dollars per 1M tokens, by model id: the
// embedded one (prices.json, taken from models.dev; see SOURCE.md) or the
// one `quotagate prices update` put in the data directory. usd_rate turns
// its Quotes into Prices in the gateway's currency (Quote.In).
type Table struct {
	Source string           // where the list as a whole came from, and when
	Models map[string]Entry // by the model id a request names
}

// Entry is one model's prices in a Table.
type Entry struct {
	Quote
	Origin string // where this price came from (a file of the source, or "quotagate")
}

// TableCurrency is the only currency a price table is written in;
// usd_rate converts it.
const TableCurrency = "USD"

//go:embed prices.json
var embedded []byte

var embeddedTable = sync.OnceValues(func() (Table, error) { return ParseTable(embedded) })

// Embedded is the price table built into quotagate. Each call returns its
// own copy of the models.
func Embedded() Table {
	t, err := embeddedTable()
	if err != nil {
		panic("price: the embedded prices.json is invalid: " + err.Error()) // TestEmbedded keeps it valid
	}
	t.Models = maps.Clone(t.Models)
	return t
}

// Quote is model's prices, and whether the table has them.
func (t Table) Quote(model string) (Quote, bool) {
	e, ok := t.Models[model]
	return e.Quote, ok
}

// tableFile is the file's shape; entryFile is one model in it.
type tableFile struct {
	Currency string          `json:"currency"`
	Source   string          `json:"source"`
	Models   json.RawMessage `json:"models"`
}

type entryFile struct {
	QuoteText
	Origin string `json:"origin,omitempty"`
}

// maxProblems bounds how many problems ParseTable lists at once.
const maxProblems = 20

// ParseTable reads a price file and refuses it whole, listing what is
// wrong, unless every part is right: one JSON object with currency "USD",
// a source, and models — an object of model id to its four prices (decimal
// strings, at most 6 places), each id once. Unknown keys are refused, so a
// misspelt price is not silently missing.
func ParseTable(data []byte) (Table, error) {
	var f tableFile
	if err := decodeStrict(data, &f); err != nil {
		return Table{}, fmt.Errorf("price file: %w", err)
	}
	var problems []error
	if f.Currency != TableCurrency {
		problems = append(problems, fmt.Errorf("currency is %q: a price table is in %q (usd_rate converts it)", f.Currency, TableCurrency))
	}
	if strings.TrimSpace(f.Source) == "" {
		problems = append(problems, errors.New("source is missing: say where the prices come from and when"))
	}
	models, err := parseModels(f.Models, &problems)
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Errorf("and %d more problems", len(problems)-maxProblems))
	}
	if err := errors.Join(problems...); err != nil {
		return Table{}, fmt.Errorf("price file: %w", err)
	}
	return Table{Source: f.Source, Models: models}, nil
}

// parseModels reads the models object token by token, because a Go map
// would keep the last of two entries for one model without a word.
func parseModels(raw json.RawMessage, problems *[]error) (map[string]Entry, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("models is missing")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("models is not an object of model id to prices")
	}
	d.DisallowUnknownFields()
	models := map[string]Entry{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
		id := tok.(string) // inside an object, a key is always a string
		var ef entryFile
		if err := d.Decode(&ef); err != nil {
			return nil, fmt.Errorf("models[%q]: %w", id, err)
		}
		if err := modelID(id); err != nil {
			*problems = append(*problems, err)
		}
		if _, dup := models[id]; dup {
			*problems = append(*problems, fmt.Errorf("models[%q] appears twice", id))
		}
		q, err := ef.Quote()
		if err != nil {
			*problems = append(*problems, fmt.Errorf("models[%q]: %w", id, err))
		}
		models[id] = Entry{Quote: q, Origin: ef.Origin}
	}
	if len(models) == 0 {
		return nil, errors.New("models is empty: a table prices at least one model")
	}
	return models, nil
}

// modelID refuses an id no request could name.
func modelID(id string) error {
	if id == "" || len(id) > 256 || strings.TrimSpace(id) != id {
		return fmt.Errorf("models[%q]: a model id is 1 to 256 characters without surrounding spaces", id)
	}
	if strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return fmt.Errorf("models[%q]: a model id has no control characters", id)
	}
	return nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown keys
// and anything after the value.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not a price table: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("not a price table: more follows the JSON object")
	}
	return nil
}

// Encode writes t as a price file, models sorted, one a line, so that a
// new version of the source shows as a readable diff.
func (t Table) Encode() []byte {
	var b bytes.Buffer
	head, _ := json.Marshal(struct {
		Currency string `json:"currency"`
		Source   string `json:"source"`
	}{TableCurrency, t.Source})
	b.Write(head[:len(head)-1])
	b.WriteString(",\n\"models\": {\n")
	ids := slices.Sorted(maps.Keys(t.Models))
	for i, id := range ids {
		e := t.Models[id]
		key, _ := json.Marshal(id)
		line, _ := json.Marshal(entryFile{QuoteText: e.Quote.Text(), Origin: e.Origin})
		fmt.Fprintf(&b, "  %s: %s", key, line)
		if i < len(ids)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}}\n")
	return b.Bytes()
}
