package wire

import (
	"encoding/json"
	"testing"
)

func TestCompact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{`"x y"`, `"x y"`},
		{`{not json`, `{not json`}, // kept as sent
	} {
		if got := string(Compact(json.RawMessage(c.in))); got != c.want {
			t.Errorf("Compact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCompactArray(t *testing.T) {
	id := func(r json.RawMessage) json.RawMessage { return r }
	if got := CompactArray(nil, id); got != nil {
		t.Errorf("no items: %q, want nil", got)
	}
	got := CompactArray([]json.RawMessage{json.RawMessage(`{ "n" : 1 }`), json.RawMessage(`[ ]`)}, id)
	if string(got) != `[{"n":1},[]]` {
		t.Errorf("got %q", got)
	}
}
