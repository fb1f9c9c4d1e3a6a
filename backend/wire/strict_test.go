package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/wire"
)

// TestBodyRead: the strict reading every door shares, refusal by refusal.
func TestBodyRead(t *testing.T) {
	body := wire.Body{Known: map[string]bool{"model": true, "max_tokens": true}, Required: []string{"model"}}
	for _, tc := range []struct {
		name, in string
		given    string // the members each is called with, in order
		refusal  string // "" when the body is read
	}{
		{"Read", `{"model":"m","max_tokens":5,"other":1}`, "model max_tokens other", ""},
		{"OptionalNullIsNotGiven", `{"model":"m","max_tokens":null}`, "model", ""},
		{"RequiredNullIsGiven", `{"model":null}`, "model", ""},
		{"NotUTF8", "{\"model\":\"\xff\"}", "", "not valid UTF-8"},
		{"NotAnObject", `["model"]`, "", "not a JSON object"},
		{"Trailing", `{"model":"m"} {}`, "", "not a JSON object"},
		{"Twice", `{"model":"m","model":"n"}`, "", `"model" appears twice`},
		{"TwiceInOtherCase", `{"model":"m","MODEL":"n"}`, "", `"MODEL" appears twice (also as "model")`},
		{"Forbidden", `{"model":"m","usage":{}}`, "", `"usage" is not allowed`},
		{"ForbiddenInOtherCase", `{"model":"m","Tenant_ID":"x"}`, "", `"Tenant_ID" is not allowed`},
		{"ForbiddenEscaped", `{"model":"m","\u0075sage":{}}`, "", `"usage" is not allowed`},
		{"KnownInOtherCase", `{"Model":"m"}`, "", `"Model" must be spelled "model"`},
		{"KnownUnicodeFold", `{"max_toKens":1}`, "", `must be spelled "max_tokens"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var given []string
			fields, err := body.Read([]byte(tc.in), func(f wire.Field) error {
				given = append(given, f.Key)
				return nil
			})
			if tc.refusal != "" {
				var re *wire.RequestError
				if !errors.As(err, &re) || !strings.Contains(re.Message, tc.refusal) {
					t.Fatalf("err = %v, want a refusal saying %q", err, tc.refusal)
				}
				return
			}
			if err != nil || strings.Join(given, " ") != tc.given {
				t.Fatalf("given %q (%v), want %q", given, err, tc.given)
			}
			if len(fields) != strings.Count(tc.in, ":") {
				t.Errorf("%d fields returned; every member, null or not, is", len(fields))
			}
		})
	}
	stop := errors.New("stop")
	if _, err := body.Read([]byte(`{"model":"m"}`), func(wire.Field) error { return stop }); err != stop {
		t.Errorf("each's error = %v, want it returned as it is", err)
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // -1: refused
	}{
		{"0", 0}, {" 42 ", 42}, {"9007199254740991", wire.MaxCount}, {"9007199254740992", -1},
		{"-1", -1}, {"-0", -1}, {"1.0", -1}, {"1e3", -1}, {`"5"`, -1}, {"007", -1}, {"", -1}, {"null", -1},
		{"99999999999999999999", -1},
	} {
		got, err := wire.Count([]byte(tc.in))
		if (tc.want < 0) != (err != nil) || (err == nil && got != tc.want) {
			t.Errorf("Count(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestRequire(t *testing.T) {
	fields := []wire.Field{{Key: "model", Val: []byte(`"m"`)}, {Key: "input", Val: []byte(`null`)}}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"model", "input"}, ""},
		{[]string{"model", "prompt", "suffix"}, "prompt is required"},
		{[]string{"Model"}, "Model is required"}, // members are matched as spelled
	} {
		err := wire.Require(fields, tc.names...)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Require(%v) = %v, want nil", tc.names, err)
			}
			continue
		}
		var re *wire.RequestError
		if !errors.As(err, &re) || re.Error() != tc.want {
			t.Errorf("Require(%v) = %v, want the refusal %q", tc.names, err, tc.want)
		}
	}
}
