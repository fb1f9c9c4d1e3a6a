package sqlite_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

func TestOutbox(t *testing.T) {
	ledgertest.RunOutbox(t, func(tb testing.TB) ledger.Store { return MustOpenStore(tb, sqlite.Options{}) })
}
