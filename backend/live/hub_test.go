package live_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/live"
)

func TestHub(t *testing.T) {
	t.Run("DeliversInOrder", func(t *testing.T) {
		h := live.NewHub(4)
		s := h.Subscribe()
		defer s.Close()
		h.Publish(live.Change{Kind: live.KindLedger, RunID: "r1"})
		h.Publish(live.Change{Kind: live.KindLedger, TenantID: "a"})
		if c := <-s.C(); c.RunID != "r1" {
			t.Fatalf("first change = %+v, want run r1", c)
		}
		if c := <-s.C(); c.TenantID != "a" {
			t.Fatalf("second change = %+v, want tenant a", c)
		}
	})
	t.Run("SlowSubscriberDropped", func(t *testing.T) {
		h := live.NewHub(2)
		slow, fast := h.Subscribe(), h.Subscribe()
		defer fast.Close()
		got := 0
		for i := 0; i < 5; i++ {
			h.Publish(live.Change{Kind: live.KindQuota})
			select { // the fast one keeps up; Publish has buffered the change before it returns
			case <-fast.C():
				got++
			default:
				t.Fatal("fast subscriber starved")
			}
		}
		n := 0
		for range slow.C() { // drains the 2 buffered, then sees the close
			n++
		}
		if n != 2 {
			t.Fatalf("slow subscriber got %d changes before the drop, want 2", n)
		}
		if !errors.Is(slow.Err(), live.ErrSlowSubscriber) {
			t.Fatalf("slow.Err() = %v, want ErrSlowSubscriber", slow.Err())
		}
		if got != 5 || h.Len() != 1 {
			t.Fatalf("fast got %d (want 5), subscribers %d (want 1)", got, h.Len())
		}
		if _, dropped := h.Stats(); dropped != 1 {
			t.Fatalf("dropped = %d, want 1", dropped)
		}
		slow.Close() // after a drop: no panic, Err unchanged
		if !errors.Is(slow.Err(), live.ErrSlowSubscriber) {
			t.Fatalf("Close after drop changed Err to %v", slow.Err())
		}
	})
	t.Run("CloseEndsWithNilErr", func(t *testing.T) {
		h := live.NewHub(0)
		s := h.Subscribe()
		s.Close()
		s.Close()
		if _, ok := <-s.C(); ok {
			t.Fatal("channel still open after Close")
		}
		if s.Err() != nil || h.Len() != 0 {
			t.Fatalf("Err=%v Len=%d, want nil, 0", s.Err(), h.Len())
		}
		h.Publish(live.Change{Kind: live.KindConfig}) // no subscribers: no panic
	})
	t.Run("ConcurrentPublishSubscribeClose", func(t *testing.T) {
		h := live.NewHub(1)
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for j := 0; j < 200; j++ {
					h.Publish(live.Change{Kind: live.KindLedger})
				}
			}()
			go func() {
				defer wg.Done()
				for j := 0; j < 50; j++ {
					s := h.Subscribe()
					select {
					case <-s.C():
					default:
					}
					s.Close()
				}
			}()
		}
		wg.Wait()
		if h.Len() != 0 {
			t.Fatalf("%d subscribers left", h.Len())
		}
		if p, _ := h.Stats(); p != 8*200 {
			t.Fatalf("published = %d, want %d", p, 8*200)
		}
	})
}

// BenchmarkPublish measures the cost the relay pays per change with 4
// dashboard subscribers, against bare non-blocking channel sends. Both drain
// their channels inline every 512 changes so that nobody is dropped.
func BenchmarkPublish(b *testing.B) {
	b.Run("Hub4Subscribers", func(b *testing.B) {
		h := live.NewHub(1024)
		subs := make([]*live.Subscription, 4)
		for i := range subs {
			subs[i] = h.Subscribe()
			defer subs[i].Close()
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h.Publish(live.Change{Kind: live.KindLedger, RunID: "r"})
			if i++; i%512 == 0 {
				for _, s := range subs {
					for len(s.C()) > 0 {
						<-s.C()
					}
				}
			}
		}
		if _, d := h.Stats(); d != 0 {
			b.Fatalf("%d subscribers dropped", d)
		}
	})
	b.Run("BaselineChannel4Sends", func(b *testing.B) {
		chs := make([]chan live.Change, 4)
		for i := range chs {
			chs[i] = make(chan live.Change, 1024)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			for _, ch := range chs {
				select {
				case ch <- live.Change{Kind: live.KindLedger, RunID: "r"}:
				default:
				}
			}
			if i++; i%512 == 0 {
				for _, ch := range chs {
					for len(ch) > 0 {
						<-ch
					}
				}
			}
		}
	})
}
