package main

import (
	"context"
	"errors"
)

// StartInProcess would assemble the gateway in this process (RSS of self).
// It waits for an exported assembly of server + sqlite + gateway + demo
// upstream: today that wiring lives in main.go, which nothing may import, so
// run the real binary with -binary instead (that also keeps the gateway's
// RSS apart from the load generator's).
func StartInProcess(ctx context.Context, o SpawnOptions) (*Fleet, error) {
	return nil, errors.New("-inprocess is not wired yet: build quotagate and use -binary ./quotagate")
}
