package app

import (
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/quotagate/quotagate/backend/audit"
)

// SaveAuditCSV asks where to save the audit export and writes it there;
// query is the dashboard's filter as a URL query (as in GET
// /admin/api/audit.csv), and the suggested name is the one the browser gets.
// It returns the chosen path, or "" when the user cancelled the dialog.
func (a *App) SaveAuditCSV(query string) (string, error) {
	srv, err := a.server()
	if err != nil {
		return "", err
	}
	q, err := srv.ParseAuditQuery(query)
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", message("save audit log", err)
	}
	if err := srv.WriteAuditQuery(a.ctx, f, q); err != nil {
		f.Close()
		return "", message("export audit log", err)
	}
	if err := f.Close(); err != nil {
		return "", message("save audit log", err)
	}
	return path, nil
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
