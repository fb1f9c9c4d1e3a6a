package postgres

import (
	"context"

	"github.com/quotagate/quotagate/backend/ledger"
)

// VerifyFrom is Store.VerifyWith that also says where its replay started
// (0: the first row) and how many audit rows it replayed.
func VerifyFrom(ctx context.Context, s *Store, opts ledger.VerifyOptions) (problems []string, resumed int64, replayed int, err error) {
	v, err := s.verify(ctx, opts)
	if err != nil {
		return nil, 0, 0, err
	}
	return v.Problems, v.Resumed(), v.Replayed(), nil
}

// SetHorizonWaits calls fn when a verify starts waiting for the audit
// writes in flight before it takes its checkpoint's horizon; it returns
// the undo.
func SetHorizonWaits(fn func()) (undo func()) {
	old := horizonWaits
	horizonWaits = fn
	return func() { horizonWaits = old }
}
