package meter

import "testing"

func TestQuickSeeds(t *testing.T) {
	m, _ := New(NameUTF8Bytes)
	for s, want := range map[string]int64{"hi": 2, "问题": 6, "你好 AI": 9} {
		if got := m.Count("", s); int64(got) != want {
			t.Errorf("%q=%d want %d", s, got, want)
		}
	}
	req, err := ParseChatRequest([]byte(`{"model":"demo","messages":[{"role":"user","content":"hi"}],"max_tokens":100}`))
	if err != nil {
		t.Fatal(err)
	}
	in, res := ReservePolicy{DefaultOutputUnits: 50}.Reserve(m, req)
	if in != 2 || res != 102 {
		t.Fatalf("got %d %d", in, res)
	}
	tk, err := New(NameTiktoken)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(tk.Count("gpt-4o", "hello world, 你好"), tk.Count("x", "hello world, 你好"))
}
