package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/server"
)

// TestArchiveAction: the dashboard's Archive action refuses a date that is
// not the first of a closed month, and archives a closed month's runs
// through the serving gateway's ledger, leaving verify clean.
func TestArchiveAction(t *testing.T) {
	dir := t.TempDir()
	past := open(t, dir, func(o *server.Options) { o.Clock = clock.New(-62 * 24 * time.Hour) })
	if code, body := chatPlan(t, past, past.GeneratedKeys()["local"], ""); code != 200 {
		t.Fatalf("chat: %d %s", code, body)
	}
	if err := past.Close(); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	for _, bad := range []string{`{"before":"soon"}`, `{"before":"2020-01-15"}`, `{"before":"2999-01-01"}`} {
		if code, body := post(t, s, "/admin/api/archive", bad); code != 400 {
			t.Errorf("%s: %d %s, want 400", bad, code, body)
		}
	}
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	code, body := post(t, s, "/admin/api/archive", `{"before":"`+first+`"}`)
	if code != 200 || !strings.Contains(body, `"runs":1`) {
		t.Fatalf("archive: %d %s", code, body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if diffs, err := server.VerifyWith(context.Background(), server.Options{DataDir: dir}, server.VerifyOptions{Full: true}); err != nil || len(diffs) > 0 {
		t.Fatalf("verify after the action: %q, %v", diffs, err)
	}
}
