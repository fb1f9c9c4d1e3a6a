// Package instance keeps one gateway per data directory from the user's side:
// a second launch of the app on a directory that a running quotagate holds
// (see package datadir) asks that one to show its dashboard — its window
// comes forward, or, for a headless `serve`, the caller opens a window onto
// it — instead of failing or starting a second gateway.
package instance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/datadir"
	"github.com/quotagate/quotagate/backend/server"
)

// Running is the quotagate that holds a data directory.
type Running struct {
	datadir.Holder
	Dir    string // the data directory it holds
	Token  string // its admin token, read from the data dir (or the config)
	Window bool   // it showed its window; false: headless, open a window onto URL
}

// announceWait bounds how long a holder that is still starting may take to
// record its URL in the lock file.
const announceWait = 10 * time.Second

// Handover asks the quotagate holding dataDir, if any, to show its dashboard.
// ok is false when no live process holds dataDir: the caller starts its own
// gateway. token is the configured admin token ("" for the data dir's own).
func Handover(ctx context.Context, dataDir, token string) (r Running, ok bool, err error) {
	h, held, err := datadir.Read(dataDir)
	if err != nil || !held {
		return Running{}, false, err
	}
	for deadline := time.Now().Add(announceWait); h.URL == "" && held; {
		if time.Now().After(deadline) {
			return Running{}, true, fmt.Errorf("quotagate (pid %d) holds %s but has not started listening after %s", h.PID, dataDir, announceWait)
		}
		select { // the holder writes its URL into the lock file once it listens
		case <-ctx.Done():
			return Running{}, true, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if h, held, err = datadir.Read(dataDir); err != nil {
			return Running{}, true, err
		}
	}
	if !held { // it exited while we waited: start our own
		return Running{}, false, nil
	}
	if token == "" {
		b, err := os.ReadFile(filepath.Join(dataDir, server.AdminTokenFile))
		if err != nil {
			return Running{}, true, fmt.Errorf("read the running quotagate's admin token: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	r = Running{Holder: h, Dir: dataDir, Token: token}
	ans, err := show(ctx, h.URL, token)
	if err != nil {
		return r, true, fmt.Errorf("ask the running quotagate (pid %d, %s) to show its dashboard: %w", h.PID, h.URL, err)
	}
	r.Window = ans.Window
	return r, true, nil
}

func show(ctx context.Context, url, token string) (admin.ShowAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/admin/api/show", bytes.NewReader(nil))
	if err != nil {
		return admin.ShowAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return admin.ShowAnswer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return admin.ShowAnswer{}, fmt.Errorf("it answered %s", resp.Status)
	}
	var ans admin.ShowAnswer
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return admin.ShowAnswer{}, errors.New("it answered with an unreadable body")
	}
	return ans, nil
}
