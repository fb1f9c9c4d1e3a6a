package ledger_test

import (
	"context"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// TestHookQueueOrder: deliveries reach the hook one at a time in push
// order, in the hook's context, each then after its hook call; after Close
// a then runs at once, without the hook.
func TestHookQueueOrder(t *testing.T) {
	q := ledger.NewHookQueue()
	var seen []int64
	inHook := true
	q.SetHook(func(ctx context.Context, cs []ledger.Change) {
		inHook = inHook && ledger.InHook(ctx)
		seen = append(seen, cs[0].Seq)
	})
	thens := make(chan int64, 200)
	for i := int64(1); i <= 200; i++ {
		q.Push([]ledger.Change{{Seq: i}}, func() {
			if n := len(seen); n == 0 || seen[n-1] != i {
				t.Errorf("then of %d ran after hook saw %v", i, seen[max(0, n-1):])
			}
			thens <- i
		})
	}
	for i := int64(1); i <= 200; i++ {
		if got := <-thens; got != i {
			t.Fatalf("then %d came as %d", i, got)
		}
	}
	q.Close()
	if len(seen) != 200 || !inHook {
		t.Fatalf("hook saw %d deliveries (in hook ctx: %v)", len(seen), inHook)
	}
	ran := false
	q.Push([]ledger.Change{{Seq: 201}}, func() { ran = true })
	if !ran || len(seen) != 200 {
		t.Fatalf("after Close: then ran %v, hook saw %d", ran, len(seen))
	}
}
