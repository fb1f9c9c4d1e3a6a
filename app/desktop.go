package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/autostart"
)

// SaveAuditCSV asks where to save the audit export and writes there exactly
// what GET /admin/api/audit.csv exports for query (the dashboard's filter as
// a URL query) — the same file, under the same suggested name, as a browser
// downloads. It returns the chosen path, or "" when the user cancelled.
func (a *App) SaveAuditCSV(query string) (string, error) {
	srv, err := a.server()
	if err != nil {
		return "", err
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return "", message("audit filter", err)
	}
	q, err := audit.ParseQuery(v, nil)
	if err != nil {
		return "", message("audit filter", err)
	}
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
		Title:           "Save audit log",
		DefaultFilename: audit.FileName(q),
		Filters:         []runtime.FileFilter{{DisplayName: "CSV (*.csv)", Pattern: "*.csv"}},
	})
	if err != nil {
		return "", message("save dialog", err)
	}
	if path == "" { // cancelled
		return "", nil
	}
	if err := download(a.ctx, srv, "/admin/api/audit.csv?"+v.Encode(), path); err != nil {
		return "", message("export audit log", err)
	}
	return path, nil
}

// download writes the admin API's answer at ref into path, removing a
// partial file on failure.
func download(ctx context.Context, srv Backend, ref, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+ref, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("the gateway answered %s: %s", resp.Status, b)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// OpenDataDir shows the data directory (ledger, secrets) in the file manager.
func (a *App) OpenDataDir() error {
	srv, err := a.server()
	if err != nil {
		return err
	}
	opener := map[string]string{"linux": "xdg-open", "darwin": "open", "windows": "explorer"}[goruntime.GOOS]
	cmd := exec.Command(opener, srv.DataDir())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open %s with %s: %w", srv.DataDir(), opener, err)
	}
	go cmd.Wait() // reap it; the file manager's exit status says nothing useful
	return nil
}

// StartAtLogin reports whether the gateway starts headless at login.
func (a *App) StartAtLogin() (bool, error) {
	return autostart.EntryEnabled()
}

// SetStartAtLogin turns starting the gateway at login (headless, on this
// window's data directory) on or off.
func (a *App) SetStartAtLogin(on bool) error {
	if !on {
		return autostart.DisableEntry()
	}
	srv, err := a.server()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("find this program's path: %w", err)
	}
	return autostart.EnableEntry(autostart.Serve(exe, srv.DataDir()))
}

// show brings the window forward; a second launch asks for it.
func (a *App) show() bool {
	runtime.WindowShow(a.ctx)
	runtime.WindowUnminimise(a.ctx)
	return true
}

// BeforeClose is passed as OnBeforeClose (exempt from binding). Closing the
// window of a gateway that serves tools asks once whether to keep serving in
// the background (the answer is remembered in the data dir); kept, the
// window hides and `quotagate` launched again brings it back. An attached
// window just closes: its gateway runs on regardless.
func (a *App) BeforeClose(ctx context.Context) (prevent bool) {
	srv, err := a.server()
	if err != nil || a.signalled() {
		return false
	}
	if _, attached := srv.(Remote); attached {
		return false
	}
	p := prefsIn(srv.DataDir())
	keep, asked := p.KeepServing()
	if !asked {
		ans, err := runtime.MessageDialog(ctx, runtime.MessageDialogOptions{
			Type:  runtime.QuestionDialog,
			Title: "Keep serving in the background?",
			Message: "Your tools reach quotagate at " + srv.URL() + ". Keep serving them after this window closes?\n\n" +
				"Yes: the window hides and launching quotagate again brings it back.\nNo: quotagate stops.\n\nYou will not be asked again.",
			Buttons:       []string{"Yes", "No"},
			DefaultButton: "Yes",
		})
		if err != nil {
			return false
		}
		keep = ans == "Yes"
		if err := p.SetKeepServing(keep); err != nil {
			runtime.LogWarning(ctx, "remember the keep-serving answer: "+err.Error())
		}
	}
	if keep {
		runtime.WindowHide(ctx)
		return true
	}
	return false
}
