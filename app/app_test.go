package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/quotagate/quotagate/app"
	"github.com/quotagate/quotagate/backend/server"
)

// TestConnection: the binding returns the URL and token of the server that
// Startup opened, and that pair opens the admin API.
func TestConnection(t *testing.T) {
	var srv *server.Server
	a := app.New(func(ctx context.Context) (app.Backend, error) {
		var err error
		srv, err = server.Open(ctx, server.Options{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "app"})
		return srv, err
	})
	got := make(chan app.Connection, 1)
	go func() { // Connection waits for Startup, as a page loading early would
		c, err := a.Connection()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	a.Startup(context.Background())
	defer a.Shutdown(context.Background())
	c := <-got
	if app.StartError(a) != nil || c.URL != srv.URL() || c.Token != srv.AdminToken() {
		t.Fatalf("Connection = %+v (err %v), want %s and the admin token", c, app.StartError(a), srv.URL())
	}
	req, _ := http.NewRequest("GET", c.URL+"/admin/api/state", nil)
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Origin", "wails://wails")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("state with the bound connection: %v %v", resp, err)
	}
	resp.Body.Close()
	a.Shutdown(context.Background())
	if _, err := http.Get(c.URL + "/healthz"); err == nil {
		t.Fatal("server still answering after Shutdown")
	}
}
